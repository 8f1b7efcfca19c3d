package io.tierlog.access;

/**
 * One grant, {@code <operation>:<resource>}: {@code produce:topic:orders}, {@code fetch:topic:orders*} (every topic
 * whose name starts with {@code orders}), {@code read:group:billing}, {@code produce:transaction:billing-*} (Kafka
 * producers whose {@code transactional.id} starts with {@code billing-}), {@code admin:cluster}. A name ending in
 * {@code *} is a prefix (a lone {@code *} matches every name); no other wildcard exists. Immutable.
 */
public record Scope(Operation operation, Resource.Kind kind, String name, boolean prefix) {
    public static final Scope ADMIN = new Scope(Operation.ADMIN, Resource.Kind.CLUSTER, "", false);

    /** Parses one scope; throws {@link InvalidScopeException} naming it when it is not one. */
    public static Scope parse(String text) {
        if (text.equals("admin:cluster")) {
            return ADMIN;
        }
        String[] parts = text.split(":", 3);
        if (parts.length != 3) {
            throw new InvalidScopeException("scope '" + text + "' is not <operation>:topic:<name>, "
                    + "<operation>:group:<name>, <operation>:transaction:<id> or admin:cluster");
        }
        Operation op = Operation.parse(parts[0]);
        Resource.Kind kind = switch (parts[1]) {
            case "topic" -> Resource.Kind.TOPIC;
            case "group" -> Resource.Kind.GROUP;
            case "transaction" -> Resource.Kind.TRANSACTION;
            default -> null;
        };
        if (kind == null) {
            throw new InvalidScopeException("scope '" + text + "': resource type must be topic, group or transaction");
        }
        if (op == null || op == Operation.ADMIN || !op.appliesTo(kind)) {
            throw new InvalidScopeException("scope '" + text + "': operation '" + parts[0] + "' does not apply to "
                    + kind.id() + switch (kind) {
                        case TOPIC -> "s (produce, fetch, describe, create, alter, delete)";
                        case TRANSACTION -> "s (produce, describe)";
                        default -> "s (read, commit, delete)";
                    });
        }
        String name = parts[2];
        boolean prefix = name.endsWith("*");
        if (prefix) {
            name = name.substring(0, name.length() - 1);
        }
        if ((name.isEmpty() && !prefix) || !name.matches("[A-Za-z0-9._-]*")) {
            throw new InvalidScopeException("scope '" + text + "': name must be a topic or group name, "
                    + "optionally ending in * for a prefix");
        }
        return new Scope(op, kind, name, prefix);
    }

    /** Whether this scope names {@code resource} (its operation is the caller's check). */
    boolean covers(Resource resource) {
        if (resource.kind() != kind) {
            return false;
        }
        return prefix ? resource.name().startsWith(name) : resource.name().equals(name);
    }

    @Override
    public String toString() {
        return this == ADMIN || operation == Operation.ADMIN ? "admin:cluster"
                : operation.id() + ":" + kind.id() + ":" + name + (prefix ? "*" : "");
    }
}
