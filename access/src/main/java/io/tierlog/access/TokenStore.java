package io.tierlog.access;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Map;

/**
 * Minted tokens, durable on the shared hot volume: one {@link VolumeRecords} file per token, {@code <dir>/<id>.json},
 * so that every instance (index-services, ingest functions) sharing the volume sees the same tokens.
 *
 * <p><b>Durability and crash safety.</b> A file is written to a temporary name, fsynced, atomically renamed over
 * its final name and the directory fsynced, before {@link #mint} or {@link #revoke} returns: a crash leaves either
 * the old or the new file, never a torn one, and an answered revocation is never lost.
 *
 * <p><b>Concurrent instances.</b> Ids are 128 random bits, so two instances never create the same file. After its
 * creation a record changes only by revocation, which is idempotent and monotonic (no write ever un-revokes), so two
 * instances revoking at once, or one revoking while another re-reads, cannot lose a revocation.
 *
 * <p><b>Visibility.</b> The minting or revoking instance updates its view at once; the others re-read the directory
 * every refresh period ({@link #startRefresher}; the service uses 500 ms, inside the contract's 2 s), parsing the
 * files a mint or revocation replaced (a new inode each).
 *
 * <p><b>Lookup.</b> By the SHA-256 of the presented secret in a hash map (the map's timing depends on the hash, which
 * tells an attacker nothing about any stored secret), then a constant-time comparison. Lookups are lock-free
 * reads of an immutable snapshot; thread-safe throughout.
 */
public final class TokenStore implements AutoCloseable {
    private final Clock clock;
    private final Secrets secrets;
    private final Object writeLock = new Object();
    private final VolumeRecords<TokenRecord, Index> records;

    /** The outcome of presenting a secret: the record, or why there is none. */
    public record Lookup(TokenRecord record, AuthFailure failure) {
    }

    /** A minted token: its record and its secret, which is never stored and shown only once. */
    public record Minted(TokenRecord record, String secret) {
    }

    /** The tokens by the hex SHA-256 of their secret. */
    private record Index(Map<String, TokenRecord> byHash) {
        static Index of(Map<String, TokenRecord> byId) {
            Map<String, TokenRecord> byHash = new HashMap<>();
            byId.values().forEach(r -> byHash.put(HexFormat.of().formatHex(r.secretHash()), r));
            return new Index(Map.copyOf(byHash));
        }
    }

    /** A store over {@code dir} (created when missing), loaded before this returns. */
    public TokenStore(Path dir, Clock clock, Secrets secrets) {
        this.clock = clock;
        this.secrets = secrets;
        this.records = new VolumeRecords<>(dir, clock, secrets, "token", TokenStore::parse, Index::of);
    }

    private static TokenRecord parse(String id, Map<String, Object> json) {
        TokenRecord r = TokenRecord.fromJson(json);
        if (!r.id().equals(id)) {
            throw new IllegalArgumentException("its name is not its token's id");
        }
        return r;
    }

    /** The token directory under a hot volume: {@code <data-dir>/__metadata/tokens}. */
    public static Path directoryIn(Path dataDir) {
        return dataDir.resolve("__metadata").resolve("tokens");
    }

    /** Re-reads the directory every {@code period} on a daemon thread, until {@link #close}. */
    public void startRefresher(Duration period) {
        records.startRefresher(period);
    }

    /** Re-reads the directory: new tokens and revocations made elsewhere join the view. */
    public void refresh() {
        records.refresh();
    }

    /**
     * Re-reads the directory when the last read is older than {@code maxAge}: for processes that are frozen between
     * requests (Lambda), where a background refresher would not run, so each request sees tokens at most
     * {@code maxAge} old.
     */
    public void refreshIfOlderThan(Duration maxAge) {
        records.refreshIfOlderThan(maxAge);
    }

    /** Mints a token; durable before it returns. */
    public Minted mint(String name, Scopes scopes, Long expiresAt) {
        String secret = secrets.newSecret();
        TokenRecord r = new TokenRecord(secrets.newId(), name, scopes, expiresAt, clock.millis(), null,
                Secrets.sha256(secret));
        records.put(r.id(), r.toJson(), r);
        return new Minted(r, secret);
    }

    /**
     * Revokes token {@code id}; durable before it returns. False when there is no such token or it was revoked
     * already (it then no longer exists for clients).
     */
    public boolean revoke(String id) {
        if (!id.matches("[0-9a-f]{32}")) {
            return false;
        }
        synchronized (writeLock) {
            TokenRecord current = records.reread(id);
            if (current == null || current.revoked()) {
                return false;
            }
            TokenRecord revoked = current.revokedAt(clock.millis());
            records.put(id, revoked.toJson(), revoked);
            return true;
        }
    }

    /** Tokens not revoked (expired ones included, until revoked), oldest first. */
    public List<TokenRecord> list() {
        List<TokenRecord> out = new ArrayList<>();
        for (TokenRecord r : records.all().values()) {
            if (!r.revoked()) {
                out.add(r);
            }
        }
        out.sort(Comparator.comparingLong(TokenRecord::createdAt).thenComparing(TokenRecord::id));
        return out;
    }

    /**
     * Token {@code id} if it is neither revoked nor expired, read from the volume afresh (a revocation made on another
     * instance a moment ago counts): what a credential derived from a token (a Kafka delegation token it owns) checks.
     */
    public Optional<TokenRecord> usable(String id) {
        if (id == null || !id.matches("[0-9a-f]{32}")) {
            return Optional.empty();
        }
        TokenRecord r = records.readNow(id);
        return r == null || r.revoked() || r.expiredAt(clock.millis()) ? Optional.empty() : Optional.of(r);
    }

    /** The token whose secret is {@code secret}, or why it is refused. */
    public Lookup find(String secret) {
        byte[] hash = Secrets.sha256(secret);
        TokenRecord r = records.index().byHash().get(HexFormat.of().formatHex(hash));
        if (r == null || !Secrets.same(r.secretHash(), hash)) {
            return new Lookup(null, AuthFailure.UNKNOWN);
        }
        if (r.revoked()) {
            return new Lookup(null, AuthFailure.REVOKED);
        }
        if (r.expiredAt(clock.millis())) {
            return new Lookup(null, AuthFailure.EXPIRED);
        }
        return new Lookup(r, null);
    }

    @Override
    public void close() {
        records.close();
    }
}
