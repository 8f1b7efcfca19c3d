package io.tierlog.access;

import java.util.List;

/**
 * The one authorization check per request: a principal and what the request needs ({@link HttpRoutes}) → allow, or
 * deny naming the first unmet requirement and why (for the audit log). The rules are {@link Scopes#allows}.
 * Stateless, thread-safe.
 */
public final class Authorizer {

    public Decision authorize(Principal principal, List<Requirement> requirements) {
        for (Requirement r : requirements) {
            if (!r.allowedFor(principal)) {
                return Decision.deny(principal, r, reason(principal, r));
            }
        }
        return Decision.allow(principal);
    }

    public Decision authorize(Principal principal, Operation op, Resource resource) {
        return authorize(principal, List.of(Requirement.of(op, resource)));
    }

    private static String reason(Principal principal, Requirement r) {
        if (r.kind() == Resource.Kind.CLUSTER || r.operation() == Operation.ADMIN) {
            return "needs admin:cluster";
        }
        if (r.resource() != null && r.resource().internal()) {
            return "internal topic: needs admin:cluster";
        }
        if (principal.denies(r.operation(), r.kind(), r.resource())) {
            return "a grant denies " + r + " (a DENY ACL)";
        }
        if (!principal.hasScopes()) {
            return "no scopes";
        }
        return "no scope grants " + r;
    }
}
