package io.tierlog.access;

import org.jose4j.json.JsonUtil;
import org.jose4j.lang.JoseException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Minted tokens, durable on the shared hot volume: one JSON file per token, {@code <dir>/<id>.json}, so that every
 * instance (index-services, ingest functions) sharing the volume sees the same tokens.
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
 * every refresh period ({@link #startRefresher}; the service uses 500 ms, inside the contract's 2 s).
 *
 * <p><b>Lookup.</b> By the SHA-256 of the presented secret in a hash map (the map's timing depends on the hash, which
 * tells an attacker nothing about any stored secret), then a constant-time comparison. Lookups are lock-free
 * reads of an immutable snapshot; thread-safe throughout.
 */
public final class TokenStore implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(TokenStore.class.getName());
    private static final String SUFFIX = ".json";

    private final Path dir;
    private final Clock clock;
    private final Secrets secrets;
    private final Object writeLock = new Object();
    private volatile Snapshot snapshot = new Snapshot(Map.of(), Map.of());
    private ScheduledExecutorService refresher;
    private volatile long refreshedAt;

    /** The outcome of presenting a secret: the record, or why there is none. */
    public record Lookup(TokenRecord record, AuthFailure failure) {
    }

    /** A minted token: its record and its secret, which is never stored and shown only once. */
    public record Minted(TokenRecord record, String secret) {
    }

    private record Snapshot(Map<String, TokenRecord> byHash, Map<String, TokenRecord> byId) {
    }

    /** A store over {@code dir} (created when missing), loaded before this returns. */
    public TokenStore(Path dir, Clock clock, Secrets secrets) {
        this.dir = dir;
        this.clock = clock;
        this.secrets = secrets;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the token directory", e);
        }
        refresh();
    }

    /** The token directory under a hot volume: {@code <data-dir>/__metadata/tokens}. */
    public static Path directoryIn(Path dataDir) {
        return dataDir.resolve("__metadata").resolve("tokens");
    }

    /** Re-reads the directory every {@code period} on a daemon thread, until {@link #close}. */
    public synchronized void startRefresher(Duration period) {
        if (refresher == null) {
            refresher = Refresher.every(period, "tierlog-token-refresh", this::refresh, LOG, "token");
        }
    }

    /** Re-reads every token file into a new snapshot. A file that cannot be parsed is skipped with a warning. */
    public void refresh() {
        synchronized (writeLock) {
            Map<String, TokenRecord> byHash = new HashMap<>();
            Map<String, TokenRecord> byId = new HashMap<>();
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
                for (Path f : files) {
                    if (f.getFileName().toString().startsWith(".")) {
                        continue;
                    }
                    TokenRecord r = read(f);
                    if (r != null) {
                        byHash.put(HexFormat.of().formatHex(r.secretHash()), r);
                        byId.put(r.id(), r);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list the token directory", e);
            }
            snapshot = new Snapshot(Map.copyOf(byHash), Map.copyOf(byId));
            refreshedAt = clock.millis();
        }
    }

    /**
     * Re-reads the directory when the last read is older than {@code maxAge}: for processes that are frozen between
     * requests (Lambda), where a background refresher would not run, so each request sees tokens at most
     * {@code maxAge} old.
     */
    public void refreshIfOlderThan(Duration maxAge) {
        if (clock.millis() - refreshedAt >= maxAge.toMillis()) {
            refresh();
        }
    }

    /** Mints a token; durable before it returns. */
    public Minted mint(String name, Scopes scopes, Long expiresAt) {
        String secret = secrets.newSecret();
        TokenRecord r = new TokenRecord(secrets.newId(), name, scopes, expiresAt, clock.millis(), null,
                Secrets.sha256(secret));
        synchronized (writeLock) {
            write(r);
            put(r);
        }
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
            TokenRecord current = read(dir.resolve(id + SUFFIX));
            if (current == null || current.revoked()) {
                if (current != null) {
                    put(current);
                }
                return false;
            }
            TokenRecord revoked = current.revokedAt(clock.millis());
            write(revoked);
            put(revoked);
            return true;
        }
    }

    /** Tokens not revoked (expired ones included, until revoked), oldest first. */
    public List<TokenRecord> list() {
        List<TokenRecord> out = new ArrayList<>();
        for (TokenRecord r : snapshot.byId().values()) {
            if (!r.revoked()) {
                out.add(r);
            }
        }
        out.sort(Comparator.comparingLong(TokenRecord::createdAt).thenComparing(TokenRecord::id));
        return out;
    }

    /** The token whose secret is {@code secret}, or why it is refused. */
    public Lookup find(String secret) {
        byte[] hash = Secrets.sha256(secret);
        TokenRecord r = snapshot.byHash().get(HexFormat.of().formatHex(hash));
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

    private void put(TokenRecord r) {
        Map<String, TokenRecord> byHash = new HashMap<>(snapshot.byHash());
        Map<String, TokenRecord> byId = new HashMap<>(snapshot.byId());
        byHash.put(HexFormat.of().formatHex(r.secretHash()), r);
        byId.put(r.id(), r);
        snapshot = new Snapshot(Map.copyOf(byHash), Map.copyOf(byId));
    }

    private TokenRecord read(Path f) {
        try {
            String json = Files.readString(f, StandardCharsets.UTF_8);
            return TokenRecord.fromJson(JsonUtil.parseJson(json));
        } catch (NoSuchFileException gone) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read token " + f.getFileName(), e);
        } catch (JoseException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "skipping unreadable token file " + f.getFileName() + ": " + e);
            return null;
        }
    }

    private void write(TokenRecord r) {
        byte[] bytes = JsonUtil.toJson(r.toJson()).getBytes(StandardCharsets.UTF_8);
        try {
            DurableFiles.write(dir, r.id() + SUFFIX, bytes, secrets.newId());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write token " + r.id(), e);
        }
    }

    @Override
    public synchronized void close() {
        if (refresher != null) {
            refresher.shutdownNow();
            refresher = null;
        }
    }
}
