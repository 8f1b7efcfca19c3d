package io.tierlog.access;

import io.tierlog.access.ScramCredentialStore.Credential;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * Kafka's delegation tokens (KIP-48, KIP-373): short-lived SCRAM credentials a principal creates for itself (or an
 * administrator for another), so distributed workers authenticate as that principal without its own secret. A token
 * is an id (the SCRAM user name) and a random 64-byte HMAC whose Base64 form is the password; the store keeps the
 * SHA-256 of that password (to find the token a renewal or expiry names by its HMAC) and the SCRAM keys derived from
 * it, never the HMAC itself, so a copy of the volume authenticates no one. Lifetimes are Kafka's: a token expires
 * {@code renewTime} after it is issued or renewed, and never lives past its maximum ({@code maxLifetime}, or less when
 * asked).
 *
 * <p><b>Durable on the shared hot volume</b>, one {@link VolumeRecords} file per token. A renewal rewrites it (the
 * last of two concurrent renewals wins, as in Kafka); an expiry at once (a revocation) first writes a tombstone in a
 * second directory, then removes the token, so a renewal racing it on another instance cannot bring the token back:
 * a token with a tombstone is never used. {@link #usable} reads the volume afresh, so an authentication on any
 * instance sees a creation or revocation made anywhere. Files past their maximum lifetime are removed by
 * {@link #sweep}. Thread-safe.
 */
public final class DelegationTokenStore implements AutoCloseable {
    private final VolumeRecords<Token, Map<String, Token>> tokens;
    private final VolumeRecords<Tombstone, Void> tombstones;
    private final Clock clock;
    private final Secrets secrets;
    private final long renewTimeMs;
    private final long maxLifetimeMs;

    /**
     * Who a token is for: the principal it authenticates as ({@code owner}), who created it, the principals that may
     * renew and expire it besides those two, and the scopes it carries besides the grants to its owner (the creating
     * credential's own, fixed for the token's life).
     */
    public record Ownership(String owner, String requester, List<String> renewers, Scopes scopes) {
        public Ownership {
            Objects.requireNonNull(owner, "owner");
            Objects.requireNonNull(requester, "requester");
            renewers = List.copyOf(renewers);
            Objects.requireNonNull(scopes, "scopes");
        }

        /** Kafka's {@code ownerOrRenewer}: the owner, the requester or a renewer may renew, expire and describe it. */
        public boolean manageableBy(String principal) {
            return owner.equals(principal) || requester.equals(principal) || renewers.contains(principal);
        }
    }

    /** A token as stored: its id, who it is for, its three timestamps (ms), its password's hash, its SCRAM keys. */
    public record Token(String id, Ownership ownership, long issuedAt, long expiresAt, long maxAt, byte[] passwordHash,
                        List<Credential> credentials) {
        public Token {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(ownership, "ownership");
            Objects.requireNonNull(passwordHash, "passwordHash");
            credentials = List.copyOf(credentials);
        }

        /** Whether it is past its expiry or its maximum lifetime at {@code nowMs}. */
        public boolean expiredAt(long nowMs) {
            return nowMs > expiresAt || nowMs > maxAt;
        }

        /** Its SCRAM credential for {@code mechanism}, if it has one. */
        public Optional<Credential> credential(String mechanism) {
            return credentials.stream().filter(c -> c.mechanism().equals(mechanism)).findFirst();
        }

        Token expiringAt(long at) {
            return new Token(id, ownership, issuedAt, at, maxAt, passwordHash, credentials);
        }

        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("id", id);
            json.put("owner", ownership.owner());
            json.put("requester", ownership.requester());
            json.put("renewers", ownership.renewers());
            json.put("scopes", ownership.scopes().toString());
            json.put("issuedAt", issuedAt);
            json.put("expiresAt", expiresAt);
            json.put("maxAt", maxAt);
            json.put("sha256", HexFormat.of().formatHex(passwordHash));
            json.put("credentials", credentials.stream().map(Credential::toJson).toList());
            return json;
        }

        @SuppressWarnings("unchecked")
        static Token parse(String key, Map<String, Object> json) {
            List<Credential> credentials = new ArrayList<>();
            for (Object c : (List<Object>) json.get("credentials")) {
                Map<String, Object> m = (Map<String, Object>) c;
                credentials.add(Credential.parse(ScramCredentialStore.keyOf((String) m.get("user"),
                        (String) m.get("mechanism")), m));
            }
            Token t = new Token((String) json.get("id"), new Ownership((String) json.get("owner"),
                    (String) json.get("requester"), (List<String>) json.get("renewers"),
                    Scopes.parse((String) json.get("scopes"))), number(json, "issuedAt"), number(json, "expiresAt"),
                    number(json, "maxAt"), HexFormat.of().parseHex((String) json.get("sha256")), credentials);
            if (!t.id().equals(key)) {
                throw new IllegalArgumentException("its name is not its token's id");
            }
            return t;
        }
    }

    /** A token expired at once; kept until the token's maximum lifetime has passed. */
    private record Tombstone(String id, long maxAt) {
        Map<String, Object> toJson() {
            return Map.of("id", id, "maxAt", maxAt);
        }

        static Tombstone parse(String key, Map<String, Object> json) {
            Tombstone t = new Tombstone((String) json.get("id"), number(json, "maxAt"));
            if (!t.id().equals(key)) {
                throw new IllegalArgumentException("its name is not its token's id");
            }
            return t;
        }
    }

    /** A new token and its password (the Base64 of its HMAC), which is not kept: the creator's only copy. */
    public record Created(Token token, byte[] hmac) {
    }

    /** What a renewal or expiry did: the new expiry (ms), or why nothing changed. */
    public record Change(Status status, long expiresAt) {
        static Change refused(Status status) {
            return new Change(status, -1);
        }
    }

    public enum Status { DONE, NOT_FOUND, NOT_MANAGER, EXPIRED }

    /**
     * A store over {@code dir} (created when missing), loaded before this returns.
     *
     * @param renewTime   how long a token lives from its creation or renewal when no other period is asked (Kafka's
     *                    {@code delegation.token.expiry.time.ms})
     * @param maxLifetime the longest a token may live (Kafka's {@code delegation.token.max.lifetime.ms})
     */
    public DelegationTokenStore(Path dir, Clock clock, Secrets secrets, Duration renewTime, Duration maxLifetime) {
        this.tokens = new VolumeRecords<>(dir.resolve("tokens"), clock, secrets, "delegation token", Token::parse,
                DelegationTokenStore::byPasswordHash);
        this.tombstones = new VolumeRecords<>(dir.resolve("expired"), clock, secrets, "expired delegation token",
                Tombstone::parse, all -> null);
        this.clock = clock;
        this.secrets = secrets;
        this.renewTimeMs = renewTime.toMillis();
        this.maxLifetimeMs = maxLifetime.toMillis();
    }

    /** The token directory under a hot volume: {@code <data-dir>/__metadata/delegation-tokens}. */
    public static Path directoryIn(Path dataDir) {
        return dataDir.resolve("__metadata").resolve("delegation-tokens");
    }

    /** The password a token's HMAC is, as SCRAM clients send it (Kafka's {@code hmacAsBase64String}). */
    public static String password(byte[] hmac) {
        return Base64.getEncoder().encodeToString(hmac);
    }

    /** Re-reads the volume every {@code period} on a daemon thread, until {@link #close}. */
    public void startRefresher(Duration period) {
        tokens.startRefresher(period);
        tombstones.startRefresher(period);
    }

    /**
     * Creates a token for {@code ownership}, durable before it returns.
     *
     * @param maxLifetimeMs the longest it may live; 0 or less: the store's maximum (which also bounds it)
     * @param keys          the SCRAM credentials of a password, one per mechanism, for user name {@code id}
     */
    public Created create(Ownership ownership, long maxLifetimeMs, KeyDerivation keys) {
        long now = clock.millis();
        long lifetime = maxLifetimeMs <= 0 ? this.maxLifetimeMs : Math.min(maxLifetimeMs, this.maxLifetimeMs);
        long maxAt = now + lifetime;
        String id = secrets.newId();
        byte[] hmac = secrets.newBytes(64);
        String password = password(hmac);
        Token token = new Token(id, ownership, now, Math.min(maxAt, now + renewTimeMs), maxAt,
                Secrets.sha256(password), keys.credentials(id, password));
        tokens.put(id, token.toJson(), token);
        return new Created(token, hmac);
    }

    /** Derives a password's SCRAM credentials (RFC 5802's keys, as Kafka's formatter does) for user {@code id}. */
    @FunctionalInterface
    public interface KeyDerivation {
        List<Credential> credentials(String id, String password);
    }

    /**
     * Kafka's renewal: the token whose HMAC is {@code hmac}, if {@code by} may manage it and it has not expired, now
     * expires {@code periodMs} from now (the store's renew time when negative), never past its maximum.
     */
    public Change renew(byte[] hmac, String by, long periodMs) {
        return change(hmac, by, t -> expiringIn(t, periodMs < 0 ? renewTimeMs : periodMs));
    }

    /**
     * Kafka's expiry: with a negative {@code periodMs} the token is revoked at once (a tombstone, then its file
     * removed; durable before this returns; expired or not, as in Kafka), else it expires {@code periodMs} from now
     * (not past its maximum).
     */
    public Change expire(byte[] hmac, String by, long periodMs) {
        return change(hmac, by, t -> periodMs < 0 ? revoked(t) : expiringIn(t, periodMs));
    }

    /** {@code change} applied to the token whose HMAC is {@code hmac}, if {@code by} may manage it. */
    private synchronized Change change(byte[] hmac, String by, Function<Token, Change> change) {
        Token t = byHmac(hmac);
        if (t == null) {
            return Change.refused(Status.NOT_FOUND);
        }
        if (!t.ownership().manageableBy(by)) {
            return Change.refused(Status.NOT_MANAGER);
        }
        return change.apply(t);
    }

    /** {@code t}, unless expired, now expiring {@code periodMs} from now, never past its maximum; durable. */
    private Change expiringIn(Token t, long periodMs) {
        long now = clock.millis();
        if (t.expiredAt(now)) {
            return Change.refused(Status.EXPIRED);
        }
        long at = Math.min(t.maxAt(), now + periodMs);
        Token changed = t.expiringAt(at);
        tokens.put(t.id(), changed.toJson(), changed);
        return new Change(Status.DONE, at);
    }

    /** {@code t} revoked: its tombstone first, then its file removed; durable. */
    private Change revoked(Token t) {
        Tombstone tombstone = new Tombstone(t.id(), t.maxAt());
        tombstones.put(t.id(), tombstone.toJson(), tombstone);
        tokens.remove(t.id());
        return new Change(Status.DONE, clock.millis());
    }

    /**
     * The token {@code id} if it may authenticate now: read from the volume afresh (a token created or revoked on
     * another instance a moment ago counts), not expired, not revoked.
     */
    public Optional<Token> usable(String id) {
        if (id == null || !id.matches("[0-9a-f]{32}")) {
            return Optional.empty();
        }
        Token t = tokens.readNow(id);
        if (t == null || t.expiredAt(clock.millis()) || tombstones.exists(id)) {
            return Optional.empty();
        }
        return Optional.of(t);
    }

    /** Tokens that may still be used (as this instance last read the volume), oldest first. */
    public List<Token> live() {
        long now = clock.millis();
        Map<String, Tombstone> dead = tombstones.all();
        List<Token> out = new ArrayList<>();
        for (Token t : tokens.all().values()) {
            if (!t.expiredAt(now) && !dead.containsKey(t.id())) {
                out.add(t);
            }
        }
        out.sort(Comparator.comparingLong(Token::issuedAt).thenComparing(Token::id));
        return out;
    }

    /** How many usable tokens {@code owner} has. */
    public long liveOwnedBy(String owner) {
        return live().stream().filter(t -> t.ownership().owner().equals(owner)).count();
    }

    /**
     * Removes what can never be used again: tokens and tombstones past their maximum lifetime, and tokens expired for
     * longer than the renew time (Kafka's expiry thread removes expired tokens; the grace keeps a renewal that began
     * before the expiry, on another instance, from rewriting a file just removed). Whichever instance runs it.
     */
    public void sweep() {
        long now = clock.millis();
        for (Token t : tokens.all().values()) {
            if (now > t.maxAt() || now > t.expiresAt() + renewTimeMs) {
                tokens.remove(t.id());
            }
        }
        for (Tombstone t : tombstones.all().values()) {
            if (now > t.maxAt()) {
                tombstones.remove(t.id());
            }
        }
    }

    private Token byHmac(byte[] hmac) {
        if (hmac == null || hmac.length == 0) {
            return null;
        }
        byte[] hash = Secrets.sha256(password(hmac));
        String key = HexFormat.of().formatHex(hash);
        Token seen = tokens.index().get(key);
        if (seen == null) {
            tokens.refresh(); // created on another instance since this one last looked
            seen = tokens.index().get(key);
        }
        // Read afresh: another instance may have renewed or revoked it since this one last looked.
        Token t = seen == null ? null : tokens.reread(seen.id());
        if (t == null || tombstones.exists(t.id()) || !Secrets.same(t.passwordHash(), hash)) {
            return null;
        }
        return t;
    }

    private static Map<String, Token> byPasswordHash(Map<String, Token> all) {
        Map<String, Token> out = new HashMap<>();
        all.values().forEach(t -> out.put(HexFormat.of().formatHex(t.passwordHash()), t));
        return Map.copyOf(out);
    }

    private static long number(Map<String, Object> json, String field) {
        return ((Number) json.get(field)).longValue();
    }

    @Override
    public void close() {
        tokens.close();
        tombstones.close();
    }
}
