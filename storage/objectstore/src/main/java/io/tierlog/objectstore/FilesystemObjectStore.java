package io.tierlog.objectstore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded default {@link ObjectStore}: objects are files under a root directory. Safe for concurrent use
 * by threads and by processes sharing the directory (e.g. on one EFS volume), because every visible change is
 * a single atomic filesystem operation.
 *
 * <h2>Layout</h2>
 * <pre>
 * root/objects/&lt;key&gt;          one file per object; key segments are directories (keys are validated by
 *                               {@link ObjectKey}, so no key can escape root/objects)
 * root/tmp/&lt;uuid&gt;.tmp          writes in progress; never listed or readable as objects
 * </pre>
 * {@code tmp} sits beside {@code objects} in the same directory tree, hence on the same filesystem, which is
 * what makes the final rename atomic.
 *
 * <h2>Writes and crash behaviour</h2>
 * Every write copies into a fresh temp file, fsyncs it, re-reads it to check the CRC32C of what landed on disk
 * against the CRC32C of what was sent, then publishes it in one step: {@code rename(2)} for {@link #put}
 * (atomically replaces), {@code link(2)} for {@link #putIfAbsent} (atomically fails if the target exists —
 * unlike {@code Files.move} without REPLACE_EXISTING, which checks then renames and so can race). The parent
 * directory is fsynced after publishing. A crash leaves at worst a temp file, which no reader sees; temp files
 * older than {@code staleTempAge} are deleted when a store is opened (younger ones may belong to a live writer in
 * another process).
 *
 * <h2>Limitations</h2>
 * A key cannot be both an object and a "directory" of other keys ({@code a} and {@code a/b}) — S3 allows
 * that, a filesystem does not; such a put fails with an {@link ObjectStoreException}. Tierlog's key scheme never
 * does this. A key segment must fit the filesystem's name limit (255 bytes on ext4).
 * Listing costs one directory read per directory visited from the prefix down, re-done for each page.
 */
public final class FilesystemObjectStore implements ObjectStore {

    /** Default age after which a temp file is assumed to be left over from a crash. */
    public static final Duration DEFAULT_STALE_TEMP_AGE = Duration.ofHours(1);

    private static final Logger LOG = LoggerFactory.getLogger(FilesystemObjectStore.class);
    private static final String TEMP_SUFFIX = ".tmp";
    private static final int COPY_BUFFER = 1 << 16;
    /**
     * An upload is forced to disk every this many bytes, not once at the end. The store usually shares a filesystem
     * with the hot log, and on ext4 (data=ordered) every fsync of an appended segment commits the journal, which
     * first writes out the dirty data of every file with new blocks. Measured with JFR's FileForce events (fsync
     * always, 51 MB/s of paced produce, tiering to this store on the same disk): while a 128 MiB segment copy was
     * forced once, at the end, produce fsyncs took up to 313 ms; forced in 1 MiB steps, the copy's forces took at
     * most 43 ms and the slowest produce fsync 105 ms (other writers share the disk too).
     */
    private static final int FORCE_STEP = 1 << 20;
    /** Retries when a concurrent delete removes an empty parent directory between mkdir and publish. */
    private static final int PUBLISH_ATTEMPTS = 10;

    private final Path objects;
    private final Path tmp;

    /** Opens (creating if needed) a store at {@code root}, with the system clock and default stale-temp age. */
    public FilesystemObjectStore(Path root) {
        this(root, Clock.systemUTC(), DEFAULT_STALE_TEMP_AGE);
    }

    /**
     * Opens (creating if needed) a store at {@code root} and deletes temp files whose last modification is more
     * than {@code staleTempAge} before {@code clock}'s now.
     */
    public FilesystemObjectStore(Path root, Clock clock, Duration staleTempAge) {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(staleTempAge, "staleTempAge");
        Path absolute = root.toAbsolutePath().normalize();
        this.objects = absolute.resolve("objects");
        this.tmp = absolute.resolve("tmp");
        try {
            Files.createDirectories(objects);
            Files.createDirectories(tmp);
        } catch (IOException e) {
            throw new ObjectStoreException("cannot create object store at " + absolute, e);
        }
        deleteStaleTempFiles(clock.instant().minus(staleTempAge));
    }

    private void deleteStaleTempFiles(Instant olderThan) {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(tmp, "*" + TEMP_SUFFIX)) {
            for (Path entry : entries) {
                try {
                    if (Files.getLastModifiedTime(entry).toInstant().isBefore(olderThan)) {
                        Files.deleteIfExists(entry);
                        LOG.warn("Deleted stale temp file {} left by an interrupted write", entry);
                    }
                } catch (NoSuchFileException raced) {
                    // Another process cleaned it up or published it first.
                }
            }
        } catch (IOException e) {
            throw new ObjectStoreException("cannot clean temp files in " + tmp, e);
        }
    }

    @Override
    public void put(ObjectKey key, Path file) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(file, "file");
        Path temp = newTempFile();
        try {
            int sentCrc = copyToTemp(file, temp);
            verifyAndPublish(key, temp, sentCrc, false);
        } finally {
            deleteQuietly(temp);
        }
    }

    @Override
    public void put(ObjectKey key, byte[] bytes) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(bytes, "bytes");
        Path temp = writeTemp(bytes);
        try {
            verifyAndPublish(key, temp, Crc32cs.of(bytes), false);
        } finally {
            deleteQuietly(temp);
        }
    }

    @Override
    public boolean putIfAbsent(ObjectKey key, byte[] bytes) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(bytes, "bytes");
        Path temp = writeTemp(bytes);
        try {
            if (verifyAndPublish(key, temp, Crc32cs.of(bytes), true)) {
                return true;
            }
            // Same rule as S3: a key that already holds exactly these bytes is this commit.
            try {
                return java.util.Arrays.equals(bytes, get(key));
            } catch (ObjectNotFoundException deletedSince) {
                return false;
            }
        } finally {
            deleteQuietly(temp);
        }
    }

    @Override
    public byte[] get(ObjectKey key) {
        Path path = pathOf(key);
        try {
            return Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            throw new ObjectNotFoundException(key, e);
        } catch (IOException e) {
            if (cannotExist(path)) {
                throw new ObjectNotFoundException(key, e);
            }
            throw new ObjectStoreException("cannot read " + key, e);
        }
    }

    @Override
    public byte[] getRange(ObjectKey key, ByteRange range) {
        Objects.requireNonNull(range, "range");
        if (range.length() > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("range too long for one array: " + range);
        }
        Path path = pathOf(key);
        if (Files.isDirectory(path)) {
            throw new ObjectNotFoundException(key);
        }
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = channel.size();
            if (range.offset() >= size) {
                throw new InvalidRangeException(key, range, null);
            }
            ByteBuffer buffer = ByteBuffer.allocate((int) (Math.min(range.end(), size) - range.offset()));
            long position = range.offset();
            while (buffer.hasRemaining()) {
                int n = channel.read(buffer, position);
                if (n < 0) {
                    // Cannot happen for a published file (they are never modified in place), so it is corruption.
                    throw new ObjectStoreException("object " + key + " shrank while being read", null);
                }
                position += n;
            }
            return buffer.array();
        } catch (NoSuchFileException e) {
            throw new ObjectNotFoundException(key, e);
        } catch (IOException e) {
            if (cannotExist(path)) {
                throw new ObjectNotFoundException(key, e);
            }
            throw new ObjectStoreException("cannot read " + range + " of " + key, e);
        }
    }

    @Override
    public Optional<ObjectMetadata> head(ObjectKey key) {
        Path path = pathOf(key);
        try {
            BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
            return attributes.isRegularFile() ? Optional.of(metadata(key, attributes)) : Optional.empty();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            if (cannotExist(path)) {
                return Optional.empty();
            }
            throw new ObjectStoreException("cannot stat " + key, e);
        }
    }

    @Override
    public ObjectPage list(String prefix, Optional<String> pageToken, int maxKeys) {
        ObjectKey.requireValidPrefix(prefix);
        Objects.requireNonNull(pageToken, "pageToken");
        if (maxKeys < 1 || maxKeys > 1000) {
            throw new IllegalArgumentException("maxKeys must be 1..1000: " + maxKeys);
        }
        String startAfter = pageToken.map(ObjectKey::requireValidPrefix).orElse(null);
        // Start at the deepest directory the prefix names completely: "a/b/c" -> objects/a/b, key prefix "a/b/".
        String dirPrefix = prefix.substring(0, prefix.lastIndexOf('/') + 1);
        Path start = dirPrefix.isEmpty() ? objects : objects.resolve(dirPrefix);
        List<ObjectMetadata> found = new ArrayList<>(Math.min(maxKeys + 1, 1001));
        try {
            new Lister(prefix, startAfter, maxKeys + 1, found).walk(start, dirPrefix);
        } catch (UncheckedIOException e) {
            throw new ObjectStoreException("cannot list prefix '" + prefix + "'", e.getCause());
        }
        if (found.size() > maxKeys) {
            List<ObjectMetadata> page = found.subList(0, maxKeys);
            return new ObjectPage(page, Optional.of(page.get(maxKeys - 1).key().value()));
        }
        return new ObjectPage(found, Optional.empty());
    }

    /**
     * Depth-first walk that yields keys in lexical order. Entries of a directory are sorted by the text their
     * keys start with — a file's own name, a directory's name plus '/' — which orders them exactly as their
     * full keys compare (no file name contains '/'), so the walk never has to sort more than one directory.
     */
    private final class Lister {
        private final String prefix;
        private final String startAfter;
        private final int limit;
        private final List<ObjectMetadata> out;

        Lister(String prefix, String startAfter, int limit, List<ObjectMetadata> out) {
            this.prefix = prefix;
            this.startAfter = startAfter;
            this.limit = limit;
            this.out = out;
        }

        /** @return true once {@code limit} objects were found */
        boolean walk(Path dir, String keyPrefix) {
            List<Entry> entries = new ArrayList<>();
            try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
                for (Path child : stream) {
                    String name = child.getFileName().toString();
                    try {
                        BasicFileAttributes attributes = Files.readAttributes(child, BasicFileAttributes.class);
                        boolean directory = attributes.isDirectory();
                        entries.add(new Entry(keyPrefix + name + (directory ? "/" : ""), child, directory,
                                attributes));
                    } catch (NoSuchFileException deletedMeanwhile) {
                        // Deleted between readdir and stat: as if listed a moment later.
                    }
                }
            } catch (NoSuchFileException | NotDirectoryException e) {
                return false; // the prefix names nothing
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            entries.sort((a, b) -> a.sortKey.compareTo(b.sortKey));
            for (Entry entry : entries) {
                if (entry.directory) {
                    boolean relevant = entry.sortKey.startsWith(prefix) || prefix.startsWith(entry.sortKey);
                    // Every key under this directory precedes startAfter: skip the subtree without reading it.
                    boolean before = startAfter != null && !startAfter.startsWith(entry.sortKey)
                            && entry.sortKey.compareTo(startAfter) < 0;
                    if (relevant && !before && walk(entry.path, entry.sortKey)) {
                        return true;
                    }
                } else if (entry.sortKey.startsWith(prefix)
                        && (startAfter == null || entry.sortKey.compareTo(startAfter) > 0)
                        && isValidKey(entry.sortKey)) {
                    out.add(metadata(new ObjectKey(entry.sortKey), entry.attributes));
                    if (out.size() >= limit) {
                        return true;
                    }
                }
            }
            return false;
        }
    }

    private record Entry(String sortKey, Path path, boolean directory, BasicFileAttributes attributes) {
    }

    private static boolean isValidKey(String candidate) {
        try {
            new ObjectKey(candidate);
            return true;
        } catch (IllegalArgumentException strayFile) {
            return false; // not written by this store (e.g. an editor's backup file); not an object
        }
    }

    @Override
    public void delete(ObjectKey key) {
        Path path = pathOf(key);
        try {
            if (Files.isDirectory(path)) {
                return; // only a prefix of other keys; no object by this name
            }
            Files.deleteIfExists(path);
        } catch (IOException e) {
            if (cannotExist(path)) {
                return;
            }
            throw new ObjectStoreException("cannot delete " + key, e);
        }
        pruneEmptyParents(path.getParent());
    }

    @Override
    public void deleteAll(Collection<ObjectKey> keys) {
        List<ObjectKey> copy = List.copyOf(keys);
        ObjectStoreException failure = null;
        for (ObjectKey key : copy) {
            try {
                delete(key);
            } catch (ObjectStoreException e) {
                if (failure == null) {
                    failure = new ObjectStoreException("could not delete all of " + copy.size() + " keys", e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public void close() {
        // Nothing held open between calls.
    }

    @Override
    public String toString() {
        return "FilesystemObjectStore[" + objects.getParent() + "]";
    }

    // ---- writing ----

    private Path newTempFile() {
        return tmp.resolve(UUID.randomUUID() + TEMP_SUFFIX);
    }

    private Path writeTemp(byte[] bytes) {
        Path temp = newTempFile();
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            writeInForcedSteps(channel, ByteBuffer.wrap(bytes), 0);
            channel.force(true);
            return temp;
        } catch (IOException e) {
            deleteQuietly(temp);
            throw new ObjectStoreException("cannot write temp file " + temp, e);
        }
    }

    /** Copies {@code source} to {@code temp}, fsyncs, and returns the CRC32C of the bytes read from the source. */
    private int copyToTemp(Path source, Path temp) {
        try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ);
             FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            long sizeBefore = in.size();
            CRC32C crc = new CRC32C();
            ByteBuffer buffer = ByteBuffer.allocate(COPY_BUFFER);
            long copied = 0;
            int unforced = 0;
            while (in.read(buffer) >= 0) {
                buffer.flip();
                crc.update(buffer.duplicate());
                copied += buffer.remaining();
                unforced = writeInForcedSteps(out, buffer, unforced);
                buffer.clear();
            }
            if (copied != sizeBefore || in.size() != sizeBefore) {
                throw new ChecksumMismatchException(
                        "source " + source + " changed size during upload (" + sizeBefore + " -> " + copied + ")",
                        null);
            }
            out.force(true);
            return (int) crc.getValue();
        } catch (NoSuchFileException e) {
            throw new ObjectStoreException("source file does not exist: " + source, e);
        } catch (IOException e) {
            throw new ObjectStoreException("cannot copy " + source + " to " + temp, e);
        }
    }

    /**
     * Writes all of {@code src}, forcing the file each time another {@link #FORCE_STEP} bytes have been written since
     * the last force; {@code unforced} is how many were written before this call without one. Returns the count
     * written since the last force, for the next call. The caller forces the rest when the file is complete.
     */
    private static int writeInForcedSteps(FileChannel out, ByteBuffer src, int unforced) throws IOException {
        while (src.hasRemaining()) {
            int n = Math.min(src.remaining(), FORCE_STEP - unforced);
            ByteBuffer step = src.slice(src.position(), n);
            while (step.hasRemaining()) {
                out.write(step);
            }
            src.position(src.position() + n);
            unforced += n;
            if (unforced == FORCE_STEP) {
                out.force(false);
                unforced = 0;
            }
        }
        return unforced;
    }

    /**
     * Checks the temp file's on-disk bytes against {@code sentCrc}, then publishes it under {@code key}.
     *
     * @return false only if {@code exclusive} and the key already existed
     */
    private boolean verifyAndPublish(ObjectKey key, Path temp, int sentCrc, boolean exclusive) {
        int storedCrc = crcOf(temp);
        if (storedCrc != sentCrc) {
            throw new ChecksumMismatchException("CRC32C of stored bytes " + Integer.toHexString(storedCrc)
                    + " != sent " + Integer.toHexString(sentCrc) + " for " + key, null);
        }
        Path target = pathOf(key);
        for (int attempt = 1; ; attempt++) {
            try {
                Files.createDirectories(target.getParent());
            } catch (FileAlreadyExistsException e) {
                throw conflict(key, e); // a parent segment is an object
            } catch (IOException e) {
                throw new ObjectStoreException("cannot create the directory for " + key, e);
            }
            try {
                if (exclusive) {
                    Files.createLink(target, temp);
                } else {
                    Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
                }
                fsyncDirectory(target.getParent());
                return true;
            } catch (FileAlreadyExistsException e) {
                if (exclusive && !Files.isDirectory(target)) {
                    return false;
                }
                throw conflict(key, e);
            } catch (NoSuchFileException e) {
                // A concurrent delete pruned the freshly created parent directory; create it again.
                if (attempt >= PUBLISH_ATTEMPTS) {
                    throw new ObjectStoreException("cannot publish " + key + " (parent kept vanishing)", e);
                }
            } catch (AtomicMoveNotSupportedException e) {
                throw new ObjectStoreException("filesystem of " + objects + " cannot rename atomically", e);
            } catch (IOException e) {
                if (Files.isDirectory(target) || hasFileAncestor(target)) {
                    throw conflict(key, e);
                }
                throw new ObjectStoreException("cannot publish " + key, e);
            }
        }
    }

    private ObjectStoreException conflict(ObjectKey key, IOException e) {
        return new ObjectStoreException("key " + key + " clashes with an existing object or prefix: the filesystem "
                + "store cannot hold both 'a' and 'a/b'", e);
    }

    /**
     * Whether an I/O error on {@code path} just means "no such object": the path is a directory (a prefix of
     * other keys) or goes through a file (ENOTDIR, which Java does not map to a specific exception type).
     */
    private boolean cannotExist(Path path) {
        return Files.isDirectory(path) || hasFileAncestor(path);
    }

    private boolean hasFileAncestor(Path target) {
        for (Path p = target.getParent(); p != null && p.startsWith(objects) && !p.equals(objects); p = p.getParent()) {
            if (Files.isRegularFile(p)) {
                return true;
            }
        }
        return false;
    }

    private static int crcOf(Path file) {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            CRC32C crc = new CRC32C();
            ByteBuffer buffer = ByteBuffer.allocate(COPY_BUFFER);
            while (channel.read(buffer) >= 0) {
                buffer.flip();
                crc.update(buffer);
                buffer.clear();
            }
            return (int) crc.getValue();
        } catch (IOException e) {
            throw new ObjectStoreException("cannot re-read " + file, e);
        }
    }

    private static void fsyncDirectory(Path dir) throws IOException {
        // Makes the rename/link itself durable; without it a power loss can forget a published object.
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    /** Removes directories emptied by a delete, so a later key may reuse the name as an object. */
    private void pruneEmptyParents(Path dir) {
        for (Path p = dir; p != null && p.startsWith(objects) && !p.equals(objects); p = p.getParent()) {
            try {
                Files.delete(p);
            } catch (DirectoryNotEmptyException | NoSuchFileException e) {
                return;
            } catch (IOException e) {
                LOG.debug("Could not prune empty directory {}", p, e);
                return;
            }
        }
    }

    private static void deleteQuietly(Path temp) {
        try {
            Files.deleteIfExists(temp);
        } catch (IOException e) {
            LOG.debug("Could not delete temp file {}; it will be removed as stale on a later open", temp, e);
        }
    }

    // ---- mapping ----

    private Path pathOf(ObjectKey key) {
        Objects.requireNonNull(key, "key");
        Path path = objects.resolve(key.value()).normalize();
        // ObjectKey already forbids '..' and leading '/'; this is the belt to those braces.
        if (!path.startsWith(objects) || path.equals(objects)) {
            throw new IllegalArgumentException("key escapes the store root: " + key);
        }
        return path;
    }

    private static ObjectMetadata metadata(ObjectKey key, BasicFileAttributes attributes) {
        Instant modified = attributes.lastModifiedTime().toInstant();
        // Each write publishes a new file (new inode), so file identity + size + mtime changes on every rewrite.
        String identity = attributes.fileKey() + "/" + attributes.size() + "/" + modified;
        return new ObjectMetadata(key, attributes.size(), etagOf(identity), modified);
    }

    private static String etagOf(String identity) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(identity.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JRE", e);
        }
    }
}
