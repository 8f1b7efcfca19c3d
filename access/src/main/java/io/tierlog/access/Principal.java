package io.tierlog.access;

import java.util.List;
import java.util.Objects;

/**
 * Who is calling, once authenticated: a name for logs and quotas ({@code token:<id>}, {@code jwt:<sub>},
 * {@code bootstrap}, {@code anonymous}) and the scopes that decide what it may do. Protocol edges store it with the
 * request (the index-service under the routing-context key {@value #CONTEXT_KEY}) so later steps (quotas, listing
 * filters) can read it. Immutable.
 */
public record Principal(String name, Scopes scopes) {
    /** The key under which the index-service keeps the request's principal in Vert.x's RoutingContext. */
    public static final String CONTEXT_KEY = "tierlog.principal";

    /**
     * {@code none} mode's caller: every non-admin operation on every non-internal topic, group and transactional id, so internal
     * {@code __} topics and tokens stay refused even on an open single-machine run.
     */
    public static final Principal ANONYMOUS = new Principal("anonymous", Scopes.of(
            List.of(Operation.PRODUCE, Operation.FETCH, Operation.DESCRIBE, Operation.CREATE, Operation.ALTER,
                    Operation.DELETE).stream().map(o -> new Scope(o, Resource.Kind.TOPIC, "", true))
                    .toArray(Scope[]::new))
            .with(Scopes.of(new Scope(Operation.READ, Resource.Kind.GROUP, "", true),
                    new Scope(Operation.COMMIT, Resource.Kind.GROUP, "", true),
                    new Scope(Operation.DELETE, Resource.Kind.GROUP, "", true),
                    new Scope(Operation.PRODUCE, Resource.Kind.TRANSACTION, "", true))));

    public Principal {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(scopes, "scopes");
    }

    public boolean allows(Operation op, Resource resource) {
        return scopes.allows(op, resource);
    }
}
