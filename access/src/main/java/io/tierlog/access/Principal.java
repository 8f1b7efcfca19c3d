package io.tierlog.access;

import java.util.List;
import java.util.Objects;

/**
 * Who is calling, once authenticated: a name for logs, quotas and grants ({@code token:<id>}, {@code jwt:<sub>},
 * {@code cert:<subject>}, {@code bootstrap}, {@code anonymous}), the scopes its credential carries and, when
 * {@code grants} is set, the scopes granted to its name there and those denied to it, read at each check so a
 * removed grant or an added denial holds on open connections too. A denial wins over every allowing scope. Grants
 * made for one host hold only when the edge set {@code address} to that one ({@link #at}). Protocol
 * edges store it with the request (the index-service under the routing-context key {@value #CONTEXT_KEY}) so later
 * steps (quotas, listing filters) can read it. Immutable (the grants are a live view).
 *
 * @param grants  the grant store whose grants to this name add to {@code scopes} (or deny), or null for none
 * @param address the address the caller connected from (an IP literal), or null when the edge has none (Lambda)
 */
public record Principal(String name, Scopes scopes, GrantStore grants, String address) {
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

    /** A principal with its credential's scopes only. */
    public Principal(String name, Scopes scopes) {
        this(name, scopes, null);
    }

    /** A principal from no address in particular. */
    public Principal(String name, Scopes scopes, GrantStore grants) {
        this(name, scopes, grants, null);
    }

    /** This principal with the grants {@code store} holds for its name added. */
    public Principal withGrants(GrantStore store) {
        return new Principal(name, scopes, store, address);
    }

    /**
     * This principal calling from {@code address}, so grants made for that host hold; itself when it has no grants
     * (an address changes nothing then).
     */
    public Principal at(String address) {
        return grants == null || Objects.equals(address, this.address) ? this
                : new Principal(name, scopes, grants, address);
    }

    public boolean allows(Operation op, Resource resource) {
        return (scopes.allows(op, resource) || granted().allows(op, resource)) && !denied().denies(op, resource);
    }

    /**
     * Whether some scope, its own or granted, allows {@code op} on some resource of {@code kind} (not denied on every
     * such resource). A listing filtered per resource with {@link #allows} follows it.
     */
    public boolean allowsSome(Operation op, Resource.Kind kind) {
        return (scopes.allowsSome(op, kind) || granted().allowsSome(op, kind)) && !denied().deniesAll(op, kind);
    }

    /**
     * Whether a denying grant refuses {@code op} on {@code resource} (when null: on every resource of {@code kind}),
     * whatever else allows it: the reason an audit line gives.
     */
    public boolean denies(Operation op, Resource.Kind kind, Resource resource) {
        return resource != null ? denied().denies(op, resource) : denied().deniesAll(op, kind);
    }

    /** Whether it has any scope at all, its own or granted. */
    public boolean hasScopes() {
        return !scopes.list().isEmpty() || !granted().list().isEmpty();
    }

    private Scopes granted() {
        return grants == null ? Scopes.NONE : grants.scopesOf(name, address);
    }

    private Scopes denied() {
        return grants == null ? Scopes.NONE : grants.deniedOf(name, address);
    }
}
