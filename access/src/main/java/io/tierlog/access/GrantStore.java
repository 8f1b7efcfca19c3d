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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Scopes granted to principals by name, beside the scopes their tokens carry: what Kafka's ACL APIs create and
 * delete (docs/security.md "Grants"). A principal's grants add to what it may do, never take away.
 *
 * <p><b>Durable on the shared hot volume</b>, one file per grant, {@code <dir>/<sha-256 of principal and
 * scope>.json}: {@link #add} writes it (temporary file, fsync, rename, directory fsync) and {@link #remove} unlinks
 * it and fsyncs the directory before they return, so an answered removal (a revocation) is never lost.
 *
 * <p><b>Concurrent instances.</b> A grant's file name is a function of the grant, so its file is its only state:
 * two instances adding or removing the same grant write or unlink the same name, with no read-modify-write whose
 * update could be lost.
 *
 * <p><b>Visibility.</b> The writing instance's view changes before the call returns; the others re-read the directory
 * every refresh period ({@link #startRefresher}; the service uses its token refresh interval, 500 ms, inside the
 * contract's 2 s for revocations). A file's content never changes, so a re-read parses only new names. Lookups read an
 * immutable snapshot; thread-safe throughout.
 */
public final class GrantStore implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GrantStore.class.getName());
    private static final String SUFFIX = ".json";
    /** The principal a grant to every authenticated caller names (Kafka's {@code User:*}). */
    public static final String EVERY_PRINCIPAL = "*";

    private final Path dir;
    private final Clock clock;
    private final Secrets secrets;
    private final Object writeLock = new Object();
    private volatile Snapshot snapshot = new Snapshot(Map.of(), Map.of());
    private ScheduledExecutorService refresher;
    private volatile long refreshedAt;

    /** One grant: {@code scope} for the principal named {@code principal} ({@link Principal#name()}, or "*"). */
    public record Grant(String principal, Scope scope) {
        public Grant {
            Objects.requireNonNull(principal, "principal");
            Objects.requireNonNull(scope, "scope");
        }

        String fileName() {
            return HexFormat.of().formatHex(Secrets.sha256(principal + '\u0000' + scope)) + SUFFIX;
        }
    }

    private record Snapshot(Map<String, Grant> byFile, Map<String, Scopes> byPrincipal) {
        static Snapshot of(Map<String, Grant> byFile) {
            Map<String, List<Scope>> lists = new HashMap<>();
            byFile.values().forEach(g -> lists.computeIfAbsent(g.principal(), k -> new ArrayList<>()).add(g.scope()));
            Map<String, Scopes> byPrincipal = new HashMap<>();
            lists.forEach((p, l) -> byPrincipal.put(p, Scopes.of(l.toArray(Scope[]::new))));
            return new Snapshot(Map.copyOf(byFile), Map.copyOf(byPrincipal));
        }
    }

    /** A store over {@code dir} (created when missing), loaded before this returns. */
    public GrantStore(Path dir, Clock clock, Secrets secrets) {
        this.dir = dir;
        this.clock = clock;
        this.secrets = secrets;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the grant directory", e);
        }
        refresh();
    }

    /** The grant directory under a hot volume: {@code <data-dir>/__metadata/grants}. */
    public static Path directoryIn(Path dataDir) {
        return dataDir.resolve("__metadata").resolve("grants");
    }

    /** Re-reads the directory every {@code period} on a daemon thread, until {@link #close}. */
    public synchronized void startRefresher(Duration period) {
        if (refresher == null) {
            refresher = Refresher.every(period, "tierlog-grant-refresh", this::refresh, LOG, "grant");
        }
    }

    /** As {@link TokenStore#refreshIfOlderThan}: for processes frozen between requests (Lambda). */
    public void refreshIfOlderThan(Duration maxAge) {
        if (clock.millis() - refreshedAt >= maxAge.toMillis()) {
            refresh();
        }
    }

    /** Re-reads the directory: grants removed elsewhere leave the view, new files are parsed. */
    public void refresh() {
        synchronized (writeLock) {
            Map<String, Grant> known = snapshot.byFile();
            Map<String, Grant> byFile = new HashMap<>();
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
                for (Path f : files) {
                    String name = f.getFileName().toString();
                    if (name.startsWith(".")) {
                        continue;
                    }
                    Grant g = known.containsKey(name) ? known.get(name) : read(f);
                    if (g != null) {
                        byFile.put(name, g);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list the grant directory", e);
            }
            snapshot = Snapshot.of(byFile);
            refreshedAt = clock.millis();
        }
    }

    /** Adds {@code grant}; durable before it returns. False when it was there already. */
    public boolean add(Grant grant) {
        String name = grant.fileName();
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("principal", grant.principal());
        json.put("scope", grant.scope().toString());
        synchronized (writeLock) {
            boolean existed = Files.exists(dir.resolve(name));
            if (!existed) {
                try {
                    DurableFiles.write(dir, name, JsonUtil.toJson(json).getBytes(StandardCharsets.UTF_8),
                            secrets.newId());
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot write a grant", e);
                }
            }
            put(name, grant);
            return !existed;
        }
    }

    /** Removes {@code grant}; durable before it returns. False when it was not there. */
    public boolean remove(Grant grant) {
        String name = grant.fileName();
        synchronized (writeLock) {
            boolean existed;
            try {
                existed = DurableFiles.delete(dir, name);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot remove a grant", e);
            }
            Map<String, Grant> byFile = new HashMap<>(snapshot.byFile());
            byFile.remove(name);
            snapshot = Snapshot.of(byFile);
            return existed;
        }
    }

    /** Every grant, by principal then scope. */
    public List<Grant> list() {
        List<Grant> out = new ArrayList<>(snapshot.byFile().values());
        out.sort(Comparator.comparing(Grant::principal).thenComparing(g -> g.scope().toString()));
        return out;
    }

    /** The scopes granted to the principal named {@code principal}, and to every principal. */
    public Scopes scopesOf(String principal) {
        Map<String, Scopes> byPrincipal = snapshot.byPrincipal();
        Scopes own = byPrincipal.getOrDefault(principal, Scopes.NONE);
        Scopes every = byPrincipal.getOrDefault(EVERY_PRINCIPAL, Scopes.NONE);
        return every.list().isEmpty() ? own : own.with(every);
    }

    private void put(String name, Grant grant) {
        Map<String, Grant> byFile = new HashMap<>(snapshot.byFile());
        byFile.put(name, grant);
        snapshot = Snapshot.of(byFile);
    }

    private Grant read(Path f) {
        try {
            Map<String, Object> json = JsonUtil.parseJson(Files.readString(f, StandardCharsets.UTF_8));
            Grant g = new Grant((String) json.get("principal"), Scope.parse((String) json.get("scope")));
            if (!g.fileName().equals(f.getFileName().toString())) {
                throw new IllegalArgumentException("its name is not its grant's");
            }
            return g;
        } catch (NoSuchFileException gone) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read grant " + f.getFileName(), e);
        } catch (JoseException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "skipping unreadable grant file " + f.getFileName() + ": " + e);
            return null;
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
