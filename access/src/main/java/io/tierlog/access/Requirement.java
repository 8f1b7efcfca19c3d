package io.tierlog.access;

/**
 * One thing a request needs: {@code operation} on {@code resource}. When {@code resource} is {@code null} the name is
 * only known from the body (creating a topic): the caller needs the operation on some resource of {@code kind}
 * before the body is read, and the handler checks the exact name once it has parsed it.
 */
public record Requirement(Operation operation, Resource.Kind kind, Resource resource) {

    public static Requirement of(Operation op, Resource r) {
        return new Requirement(op, r.kind(), r);
    }

    public boolean allowedFor(Principal p) {
        return resource != null ? p.allows(operation, resource) : p.allowsSome(operation, kind);
    }

    @Override
    public String toString() {
        return operation.id() + " on " + (resource != null ? resource.toString() : kind.id() + ":<name in the body>");
    }
}
