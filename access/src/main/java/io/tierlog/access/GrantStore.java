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
 * (Kafka's DENY ACL, ADR 0068) takes its scope away, whatever the principal's token or other grants allow. A grant
 * may hold only for callers connecting from one address (Kafka's ACL host, ADR 0069); by default it holds from all.
 *
 * <p><b>Durable on the shared hot volume</b>, one {@link VolumeRecords} file per grant named by the SHA-256 of
 * principal, scope, host and effect: {@link #add} writes it and {@link #remove} unlinks it, durably, before they
 * return, so an answered removal or denial (a revocation) is never lost. Since the name is a function of the grant,
 * two instances adding or removing the same grant write or unlink the same file, with no read-modify-write whose
 * update could be lost.
 *
 * <p><b>Visibility.</b> The writing instance's view changes before the call returns; the others re-read the directory
 * every refresh period (the service uses its token refresh interval, 500 ms, inside the contract's 2 s for
 * revocations). Lookups read an immutable snapshot; thread-safe.
 */
public final class GrantStore implements AutoCloseable {
    /** The principal a grant to every authenticated caller names (Kafka's {@code User:*}). */
    public static final String EVERY_PRINCIPAL = "*";

    private static final String DENY = "deny";
    private static final char SEPARATOR = '\u0000';

    private final VolumeRecords<Grant, Index> records;

    /**
     * One grant: {@code scope} for the principal named {@code principal} ({@link Principal#name()}, or "*"), allowed
     * or, with {@code deny}, denied; from every address, or with {@code host} only from that one
     * ({@link Principal#address()}, as the protocol edge saw it).
     */
    public record Grant(String principal, Scope scope, boolean deny, String host) {
        public Grant {
            Objects.requireNonNull(principal, "principal");
            Objects.requireNonNull(scope, "scope");
        }

        /** A grant from every address. */
        public Grant(String principal, Scope scope, boolean deny) {
            this(principal, scope, deny, null);
        }

        /** An allowing grant from every address. */
        public Grant(String principal, Scope scope) {
            this(principal, scope, false);
        }

        /**
         * The file name: a grant from every address hashes principal and scope (and the effect when it denies), as
         * before hosts and denials existed.
         */
        String key() {
            String named = principal + SEPARATOR + scope + (host == null ? "" : SEPARATOR + "host=" + host);
            return HexFormat.of().formatHex(Secrets.sha256(deny ? named + SEPARATOR + DENY : named));
        }

        static Grant parse(String key, Map<String, Object> json) {
            Object effect = json.get("effect");
            if (effect != null && !DENY.equals(effect)) {
                throw new IllegalArgumentException("effect must be deny or absent");
            }
            Grant g = new Grant((String) json.get("principal"), Scope.parse((String) json.get("scope")),
                    effect != null, (String) json.get("host"));
            if (!g.key().equals(key)) {
                throw new IllegalArgumentException("its name is not its grant's");
            }
            return g;
        }
    }

    /**
     * The grants by principal (from every address) and by principal and host ({@link #at}): what they allow and what
     * they deny.
     */
    private record Index(Map<String, Scopes> allowed, Map<String, Scopes> denied, Map<String, Scopes> allowedAt,
                         Map<String, Scopes> deniedAt) {
        static Index of(Map<String, Grant> grants) {
            return new Index(byPrincipal(grants, false, false), byPrincipal(grants, true, false),
                    byPrincipal(grants, false, true), byPrincipal(grants, true, true));
        }

        private static Map<String, Scopes> byPrincipal(Map<String, Grant> grants, boolean deny, boolean hosts) {
            Map<String, List<Scope>> lists = new HashMap<>();
            grants.values().stream().filter(g -> g.deny() == deny && (g.host() != null) == hosts)
                    .forEach(g -> lists.computeIfAbsent(hosts ? at(g.principal(), g.host()) : g.principal(),
                            k -> new ArrayList<>()).add(g.scope()));
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
        if (grant.host() != null) {
            json.put("host", grant.host());
        }
        records.put(key, json, grant);
        return true;
    }

    /** Removes {@code grant}; durable before it returns. False when it was not there. */
    public boolean remove(Grant grant) {
        return records.remove(grant.key());
    }

    /** Every grant, by principal, then scope, allowing before denying, every address before one. */
    public List<Grant> list() {
        List<Grant> out = new ArrayList<>(records.all().values());
        out.sort(Comparator.comparing(Grant::principal).thenComparing(g -> g.scope().toString())
                .thenComparing(Grant::deny)
                .thenComparing(Grant::host, Comparator.nullsFirst(Comparator.naturalOrder())));
        return out;
    }

    /** The scopes granted (allowed) to the principal named {@code principal}, and to every principal. */
    public Scopes scopesOf(String principal) {
        return scopesOf(principal, null);
    }

    /** As {@link #scopesOf(String)}, with the grants that hold from {@code address} only (null: none such). */
    public Scopes scopesOf(String principal, String address) {
        Index index = records.index();
        return withHost(ofAndEvery(index.allowed(), principal), index.allowedAt(), principal, address);
    }

    /** The scopes denied to the principal named {@code principal}, and to every principal. */
    public Scopes deniedOf(String principal) {
        return deniedOf(principal, null);
    }

    /** As {@link #deniedOf(String)}, with the denials that hold from {@code address} only (null: none such). */
    public Scopes deniedOf(String principal, String address) {
        Index index = records.index();
        return withHost(ofAndEvery(index.denied(), principal), index.deniedAt(), principal, address);
    }

    private static Scopes withHost(Scopes everywhere, Map<String, Scopes> byHost, String principal, String address) {
        if (address == null || byHost.isEmpty()) {
            return everywhere;
        }
        Scopes own = byHost.getOrDefault(at(principal, address), Scopes.NONE);
        Scopes every = byHost.getOrDefault(at(EVERY_PRINCIPAL, address), Scopes.NONE);
        return everywhere.with(own).with(every);
    }

    private static String at(String principal, String host) {
        return principal + SEPARATOR + host;
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
