package io.tierlog.access;

/**
 * The authorizer's answer for one request: allowed, or denied for {@code requirement} with the reason the audit log
 * records (the client's 403 names the operation and resource only).
 */
public record Decision(boolean allowed, Principal principal, Requirement requirement, String reason) {

    public static Decision allow(Principal p) {
        return new Decision(true, p, null, "allowed");
    }

    public static Decision deny(Principal p, Requirement r, String reason) {
        return new Decision(false, p, r, reason);
    }

    /** The operation denied, e.g. {@code produce} (null when allowed). */
    public String operation() {
        return requirement == null ? null : requirement.operation().id();
    }

    /** The resource denied, e.g. {@code topic:orders} (null when allowed). */
    public String resource() {
        if (requirement == null) {
            return null;
        }
        return requirement.resource() != null ? requirement.resource().toString() : requirement.kind().id() + ":*";
    }
}
