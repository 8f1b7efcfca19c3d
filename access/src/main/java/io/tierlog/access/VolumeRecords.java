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
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * A directory of small JSON records on the shared hot volume, one file per record, that every instance reads: the
 * storage under {@link TokenStore}, {@link GrantStore} and the service's quota overrides. A record's file name is its key (callers derive
 * it from the record, so two instances writing one record write one name and no update needs a read-modify-write).
 *
 * <p>{@link #put} writes the file (temporary file, fsync, rename, directory fsync) and {@link #remove} unlinks it and
 * fsyncs the directory before they return. This instance's view changes at once; others see a change at their next
 * {@link #refresh} (every {@link #startRefresher} period, or on demand where no background thread runs), which
 * parses only files whose name, inode, size or modification time changed. A file that does not parse, or whose
 * content is not the record its name says, is skipped with a warning. Readers get an immutable snapshot; thread-safe.
 *
 * @param <T> a parsed record
 * @param <I> the owner's index of the records (by principal, ...), rebuilt when they change
 */
public final class VolumeRecords<T, I> implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(VolumeRecords.class.getName());
    private static final String SUFFIX = ".json";

    private final Path dir;
    private final Clock clock;
    private final Secrets secrets;
    private final String what;
    private final BiFunction<String, Map<String, Object>, T> parse;
    private final Function<Map<String, T>, I> index;
    private final Object writeLock = new Object();
    private volatile Snapshot<T, I> snapshot;
    private ScheduledExecutorService refresher;
    private volatile long refreshedAt;

    /**
     * What a file was when it was parsed, so an unchanged one is not read again: a write renames a new file over
     * the old, so its inode ({@code fileKey}, where the file system has one) changes with every write.
     */
    private record Stamp(Object fileKey, long size, long modifiedNanos) {
        static Stamp of(BasicFileAttributes a) {
            return new Stamp(a.fileKey(), a.size(), a.lastModifiedTime().to(TimeUnit.NANOSECONDS));
        }
    }

    private record Snapshot<T, I>(Map<String, T> byKey, Map<String, Stamp> stamps, I index) {
    }

    /**
     * A directory of records (created when missing), read before this returns.
     *
     * @param what  what a record is, for messages ("grant")
     * @param parse a record from its key and JSON; throws when the JSON is not the record that key names
     * @param index the owner's index of every record by key
     */
    public VolumeRecords(Path dir, Clock clock, Secrets secrets, String what,
                         BiFunction<String, Map<String, Object>, T> parse, Function<Map<String, T>, I> index) {
        this.dir = dir;
        this.clock = clock;
        this.secrets = secrets;
        this.what = what;
        this.parse = parse;
        this.index = index;
        this.snapshot = new Snapshot<>(Map.of(), Map.of(), index.apply(Map.of()));
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the " + what + " directory", e);
        }
        refresh();
    }

    /** Every record by key: an immutable map. */
    public Map<String, T> all() {
        return snapshot.byKey();
    }

    /** The index of {@link #all()}, built once per change. */
    public I index() {
        return snapshot.index();
    }

    /** Re-reads the directory every {@code period} on a daemon thread, until {@link #close}. */
    public synchronized void startRefresher(Duration period) {
        if (refresher == null) {
            refresher = Refresher.every(period, "tierlog-" + what + "-refresh", this::refresh, LOG, what);
        }
    }

    /** Re-reads the directory when the last read is older than {@code maxAge} (for processes frozen between calls). */
    public void refreshIfOlderThan(Duration maxAge) {
        if (clock.millis() - refreshedAt >= maxAge.toMillis()) {
            refresh();
        }
    }

    /** Re-reads the directory: records removed elsewhere leave the view, new and changed files are parsed. */
    public void refresh() {
        synchronized (writeLock) {
            Snapshot<T, I> known = snapshot;
            Map<String, T> byKey = new HashMap<>();
            Map<String, Stamp> stamps = new HashMap<>();
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
                for (Path f : files) {
                    String name = f.getFileName().toString();
                    if (name.startsWith(".")) {
                        continue;
                    }
                    String key = name.substring(0, name.length() - SUFFIX.length());
                    Stamp stamp;
                    try {
                        stamp = Stamp.of(Files.readAttributes(f, BasicFileAttributes.class));
                    } catch (NoSuchFileException gone) {
                        continue;
                    }
                    T record = stamp.equals(known.stamps().get(key)) ? known.byKey().get(key) : read(f, key);
                    if (record != null) {
                        byKey.put(key, record);
                        stamps.put(key, stamp);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list the " + what + " directory", e);
            }
            snapshot = next(byKey, stamps);
            refreshedAt = clock.millis();
        }
    }

    /**
     * The record under {@code key} as the volume holds it now, read afresh (a change another instance made since the
     * last refresh is seen) and put in this view; null when there is none (or it does not parse).
     */
    public T reread(String key) {
        synchronized (writeLock) {
            Path f = dir.resolve(key + SUFFIX);
            T record = read(f, key);
            Map<String, T> byKey = new HashMap<>(snapshot.byKey());
            Map<String, Stamp> stamps = new HashMap<>(snapshot.stamps());
            stamps.remove(key); // re-read at the next refresh, which costs one parse
            if (record == null) {
                byKey.remove(key);
            } else {
                byKey.put(key, record);
            }
            snapshot = next(byKey, stamps);
            return record;
        }
    }

    /**
     * The record under {@code key} as the volume holds it now, leaving this instance's view as it is: for a check on
     * every login, which must not rebuild the view and its index each time; null when there is none.
     */
    public T readNow(String key) {
        return read(dir.resolve(key + SUFFIX), key);
    }

    /** Whether the volume holds a record under {@code key} now (not this instance's view). */
    public boolean exists(String key) {
        return Files.exists(dir.resolve(key + SUFFIX));
    }

    /** Writes {@code record} as {@code json} under {@code key}, replacing any; durable before it returns. */
    public void put(String key, Map<String, Object> json, T record) {
        synchronized (writeLock) {
            try {
                DurableFiles.write(dir, key + SUFFIX, JsonUtil.toJson(json).getBytes(StandardCharsets.UTF_8),
                        secrets.newId());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write a " + what, e);
            }
            Map<String, T> byKey = new HashMap<>(snapshot.byKey());
            byKey.put(key, record);
            Map<String, Stamp> stamps = new HashMap<>(snapshot.stamps());
            stamps.remove(key); // re-read at the next refresh, which costs one parse
            snapshot = next(byKey, stamps);
        }
    }

    /** Removes the record under {@code key}; durable before it returns. Whether it was there. */
    public boolean remove(String key) {
        synchronized (writeLock) {
            boolean existed;
            try {
                existed = DurableFiles.delete(dir, key + SUFFIX);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot remove a " + what, e);
            }
            Map<String, T> byKey = new HashMap<>(snapshot.byKey());
            byKey.remove(key);
            Map<String, Stamp> stamps = new HashMap<>(snapshot.stamps());
            stamps.remove(key);
            snapshot = next(byKey, stamps);
            return existed;
        }
    }

    /** The next snapshot; the index is rebuilt only when the records changed (a refresh mostly finds none). */
    private Snapshot<T, I> next(Map<String, T> byKey, Map<String, Stamp> stamps) {
        Snapshot<T, I> now = snapshot;
        boolean same = byKey.equals(now.byKey());
        return new Snapshot<>(same ? now.byKey() : Map.copyOf(byKey), Map.copyOf(stamps),
                same ? now.index() : index.apply(Map.copyOf(byKey)));
    }

    private T read(Path f, String key) {
        try {
            return parse.apply(key, JsonUtil.parseJson(Files.readString(f, StandardCharsets.UTF_8)));
        } catch (NoSuchFileException gone) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + what + " " + f.getFileName(), e);
        } catch (JoseException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "skipping unreadable " + what + " file " + f.getFileName() + ": " + e);
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
