package io.tierlog.access;

/**
 * The authorizer's answer for one request: allowed, or denied with the reason the audit log records (the client's
 * 403 names only the operation and resource).
 */
public record Decision(boolean allowed, Principal principal, Operation operation, Resource resource, String reason) {

    public static Decision allow(Principal p, Operation op, Resource r) {
        return new Decision(true, p, op, r, "allowed");
    }

    public static Decision deny(Principal p, Operation op, Resource r, String reason) {
        return new Decision(false, p, op, r, reason);
    }
}
