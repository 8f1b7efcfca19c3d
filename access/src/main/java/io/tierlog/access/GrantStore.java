package io.tierlog.access;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Scopes granted to principals by name, beside the scopes their tokens carry: what Kafka's ACL APIs create and
 * delete (docs/security.md "Grants", ADR 0064). An allowing grant adds to what its principal may do; a denying grant
 * (Kafka's DENY ACL, ADR 0068) takes its scope away, whatever the principal's token or other grants allow.
 *
 * <p><b>Durable on the shared hot volume</b>, one {@link VolumeRecords} file per grant named by the SHA-256 of
 * principal, scope and effect: {@link #add} writes it and {@link #remove} unlinks it, durably, before they return,
 * so an answered removal or denial (a revocation) is never lost. Since the name is a function of the grant, two
 * instances adding or removing the same grant write or unlink the same file, with no read-modify-write whose update
 * could be lost.
 *
 * <p><b>Visibility.</b> The writing instance's view changes before the call returns; the others re-read the directory
 * every refresh period (the service uses its token refresh interval, 500 ms, inside the contract's 2 s for
 * revocations). Lookups read an immutable snapshot; thread-safe.
 */
public final class GrantStore implements AutoCloseable {
    /** The principal a grant to every authenticated caller names (Kafka's {@code User:*}). */
    public static final String EVERY_PRINCIPAL = "*";

    private static final String DENY = "deny";

    private final VolumeRecords<Grant, Index> records;

    /**
     * One grant: {@code scope} for the principal named {@code principal} ({@link Principal#name()}, or "*"), allowed
     * or, with {@code deny}, denied.
     */
    public record Grant(String principal, Scope scope, boolean deny) {
        public Grant {
            Objects.requireNonNull(principal, "principal");
            Objects.requireNonNull(scope, "scope");
        }

        /** An allowing grant. */
        public Grant(String principal, Scope scope) {
            this(principal, scope, false);
        }

        /** The file name: an allowing grant's is the hash of principal and scope, as before denials existed. */
        String key() {
            String named = principal + '\u0000' + scope;
            return HexFormat.of().formatHex(Secrets.sha256(deny ? named + '\u0000' + DENY : named));
        }

        static Grant parse(String key, Map<String, Object> json) {
            Object effect = json.get("effect");
            if (effect != null && !DENY.equals(effect)) {
                throw new IllegalArgumentException("effect must be deny or absent");
            }
            Grant g = new Grant((String) json.get("principal"), Scope.parse((String) json.get("scope")),
                    effect != null);
            if (!g.key().equals(key)) {
                throw new IllegalArgumentException("its name is not its grant's");
            }
            return g;
        }
    }

    /** The grants by principal: what they allow and what they deny. */
    private record Index(Map<String, Scopes> allowed, Map<String, Scopes> denied) {
        static Index of(Map<String, Grant> grants) {
            return new Index(byPrincipal(grants, false), byPrincipal(grants, true));
        }

        private static Map<String, Scopes> byPrincipal(Map<String, Grant> grants, boolean deny) {
            Map<String, List<Scope>> lists = new HashMap<>();
            grants.values().stream().filter(g -> g.deny() == deny)
                    .forEach(g -> lists.computeIfAbsent(g.principal(), k -> new ArrayList<>()).add(g.scope()));
            Map<String, Scopes> scopes = new HashMap<>();
            lists.forEach((p, l) -> scopes.put(p, Scopes.of(l.toArray(Scope[]::new))));
            return Map.copyOf(scopes);
        }
    }

    /** A store over {@code dir} (created when missing), loaded before this returns. */
    public GrantStore(Path dir, Clock clock, Secrets secrets) {
        this.records = new VolumeRecords<>(dir, clock, secrets, "grant", Grant::parse, Index::of);
    }

    /** The grant directory under a hot volume: {@code <data-dir>/__metadata/grants}. */
    public static Path directoryIn(Path dataDir) {
        return dataDir.resolve("__metadata").resolve("grants");
    }

    /** Re-reads the directory every {@code period} on a daemon thread, until {@link #close}. */
    public void startRefresher(Duration period) {
        records.startRefresher(period);
    }

    /** As {@link TokenStore#refreshIfOlderThan}: for processes frozen between requests (Lambda). */
    public void refreshIfOlderThan(Duration maxAge) {
        records.refreshIfOlderThan(maxAge);
    }

    /** Re-reads the directory: grants removed elsewhere leave the view, new ones join it. */
    public void refresh() {
        records.refresh();
    }

    /** Adds {@code grant}; durable before it returns. False when it was there already. */
    public boolean add(Grant grant) {
        String key = grant.key();
        if (records.exists(key)) {
            return false;
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("principal", grant.principal());
        json.put("scope", grant.scope().toString());
        if (grant.deny()) {
            json.put("effect", DENY);
        }
        records.put(key, json, grant);
        return true;
    }

    /** Removes {@code grant}; durable before it returns. False when it was not there. */
    public boolean remove(Grant grant) {
        return records.remove(grant.key());
    }

    /** Every grant, by principal, then scope, allowing before denying. */
    public List<Grant> list() {
        List<Grant> out = new ArrayList<>(records.all().values());
        out.sort(Comparator.comparing(Grant::principal).thenComparing(g -> g.scope().toString())
                .thenComparing(Grant::deny));
        return out;
    }

    /** The scopes granted (allowed) to the principal named {@code principal}, and to every principal. */
    public Scopes scopesOf(String principal) {
        return ofAndEvery(records.index().allowed(), principal);
    }

    /** The scopes denied to the principal named {@code principal}, and to every principal. */
    public Scopes deniedOf(String principal) {
        return ofAndEvery(records.index().denied(), principal);
    }

    private static Scopes ofAndEvery(Map<String, Scopes> scopes, String principal) {
        Scopes own = scopes.getOrDefault(principal, Scopes.NONE);
        Scopes every = scopes.getOrDefault(EVERY_PRINCIPAL, Scopes.NONE);
        return every.list().isEmpty() ? own : own.with(every);
    }

    @Override
    public void close() {
        records.close();
    }
}
