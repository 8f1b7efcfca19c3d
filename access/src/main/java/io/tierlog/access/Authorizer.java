package io.tierlog.access;

/**
 * The one authorization check per request: principal, operation, resource → allow or deny with a reason. The
 * rules are {@link Scopes#allows}; this names why a denial happened, for the audit log. Stateless, thread-safe.
 */
public final class Authorizer {

    public Decision authorize(Principal principal, Operation op, Resource resource) {
        if (principal.allows(op, resource)) {
            return Decision.allow(principal, op, resource);
        }
        String reason;
        if (resource.kind() == Resource.Kind.CLUSTER || op == Operation.ADMIN) {
            reason = "needs admin:cluster";
        } else if (resource.internal()) {
            reason = "internal topic: needs admin:cluster";
        } else if (principal.scopes().list().isEmpty()) {
            reason = "no scopes";
        } else {
            reason = "no scope grants " + op.id() + " on " + resource;
        }
        return Decision.deny(principal, op, resource, reason);
    }
}
