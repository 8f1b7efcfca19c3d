package io.tierlog.objectstore;

import java.nio.file.Path;
import java.util.Collection;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.IntConsumer;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A flat store of immutable-by-convention byte objects addressed by {@link ObjectKey}: the cold tier's only view
 * of S3 or of the local filesystem. Modelled on S3's semantics so that every backend behaves like S3, and
 * verified for each backend by the test kit's {@code ObjectStoreContractTest}.
 *
 * <h2>Contract common to every method</h2>
 * <ul>
 *   <li><b>Atomic visibility.</b> A write is either wholly visible or not at all: no reader, lister or
 *       {@link #head} ever sees a partial object, and a failed write leaves the previous state (no object,
 *       or the previous version) in place. An overwrite replaces the whole object atomically.</li>
 *   <li><b>Read-after-write.</b> Once a write method returns, every later call on any instance over the same
 *       store sees it (S3 has been strongly consistent since December 2020).</li>
 *   <li><b>Idempotency.</b> {@link #put} and {@link #delete}/{@link #deleteAll} may be repeated safely; callers
 *       retry them after an {@link ObjectStoreUnavailableException}, which says nothing about whether the
 *       attempt took effect. {@link #putIfAbsent} is repeatable too, but a retry after a lost response may
 *       return {@code false} for the caller's own earlier write: compare contents to tell.</li>
 *   <li><b>Errors.</b> Only {@link ObjectStoreException} and its subclasses escape, plus {@link
 *       IllegalArgumentException}/{@link NullPointerException} for arguments that break a documented rule.
 *       A missing object is {@link ObjectNotFoundException}; an unreachable or overloaded store (after the
 *       backend's own retries) is {@link ObjectStoreUnavailableException}.</li>
 *   <li><b>Thread-safety.</b> Implementations are safe for concurrent use by any number of threads, and
 *       several instances (also in other processes) may share one store.</li>
 *   <li><b>Resources.</b> Every method returns fully materialised values; there are no open streams for the
 *       caller to close. {@link #close} releases the store's own resources only (see each implementation for
 *       whether it closes a client it was given).</li>
 * </ul>
 */
public interface ObjectStore extends AutoCloseable {

    /**
     * Stores the whole content of a local file under {@code key}, replacing any existing object.
     *
     * <p>The bytes are CRC32C-checked end to end: the checksum is computed from the bytes as read from
     * {@code file} and the store verifies the bytes it persisted against it (S3 does so server-side). The
     * file must not change during the call; if it does, the put fails with {@link ChecksumMismatchException}
     * and stores nothing. Large files are sent in parts (S3 multipart upload); a failed multipart upload is
     * aborted so no parts are left behind.
     *
     * @throws ObjectStoreException         including {@link ChecksumMismatchException}, or if {@code file} cannot
     *                                      be read
     */
    void put(ObjectKey key, Path file);

    /**
     * Stores {@code bytes} under {@code key}, replacing any existing object. CRC32C-checked like
     * {@link #put(ObjectKey, Path)}. The array is not retained.
     */
    void put(ObjectKey key, byte[] bytes);

    /**
     * Creates the object only if no object with this key exists: an atomic compare-and-create, linearizable
     * against every concurrent {@code put}/{@code putIfAbsent} on the same key from any process. This is the
     * commit primitive for manifests: racing writers of the same new key see exactly one {@code true}.
     *
     * <p>A key that already holds exactly {@code bytes} counts as created by this call: that is how a retried request
     * whose first attempt succeeded (its response lost) looks, and identical bytes are the same commit.
     *
     * @return {@code true} if this call created the object; {@code false} if the key already existed, in which
     *         case nothing was changed
     */
    boolean putIfAbsent(ObjectKey key, byte[] bytes);

    /**
     * Reads a whole object.
     *
     * @throws ObjectNotFoundException if there is no such object
     */
    byte[] get(ObjectKey key);

    /**
     * Reads part of an object, with S3's semantics for ranges that run off the end: the result holds the bytes
     * of {@code [range.offset(), min(range.end(), size))}, so it is shorter than {@code range.length()} exactly
     * when the range extends past the end of the object.
     *
     * @param range must have {@code length <= Integer.MAX_VALUE - 8} (a Java array); cold reads use bounded chunks
     * @throws ObjectNotFoundException if there is no such object
     * @throws InvalidRangeException   if {@code range.offset() >= size} (always so for an empty object)
     */
    byte[] getRange(ObjectKey key, ByteRange range);

    /**
     * Reads part of an object, as {@link #getRange}, into {@code into} from index 0, and tells {@code arrived} each
     * time more of it is final: the number of leading bytes of {@code into} that hold the object's bytes, growing
     * with every call, the last call with the returned count. A reader of a large range can start on its first
     * bytes while the rest is on the wire (a cold replay's first record,
     * docs/adr/0041-cold-range-bytes-as-they-arrive.md).
     * Bytes reported arrived are never written again, also when the read fails after them.
     *
     * <p>This default reads the whole range with {@link #getRange} and reports it once; a backend that can stream
     * its answer reports it as it comes.
     *
     * @param into    at least {@code range.length()} bytes
     * @param arrived called on the calling thread; it must be quick (it runs between reads of the answer)
     * @return the number of bytes read (shorter than the range exactly when it runs past the object's end)
     */
    default int getRange(ObjectKey key, ByteRange range, byte[] into, IntConsumer arrived) {
        if (into.length < range.length()) {
            throw new IllegalArgumentException("array of " + into.length + " bytes for " + range);
        }
        byte[] bytes = getRange(key, range);
        System.arraycopy(bytes, 0, into, 0, bytes.length);
        arrived.accept(bytes.length);
        return bytes.length;
    }

    /** The object's metadata, or empty if it does not exist. */
    Optional<ObjectMetadata> head(ObjectKey key);

    /**
     * One page of the objects whose keys start with {@code prefix}, ascending in lexical (UTF-8 byte) order.
     * A page may hold fewer than {@code maxKeys} objects even when more follow; only an empty
     * {@link ObjectPage#nextToken()} marks the end. Objects written or deleted while paging may or may not
     * appear, but no key is ever returned twice or out of order.
     *
     * @param prefix    plain string prefix (not a directory: "a/b" matches "a/b/c" and "a/bc"); "" lists all.
     *                  Must satisfy {@link ObjectKey#requireValidPrefix}
     * @param pageToken empty for the first page, else the {@code nextToken} of the previous page for the same
     *                  prefix
     * @param maxKeys   1..1000
     */
    ObjectPage list(String prefix, Optional<String> pageToken, int maxKeys);

    /**
     * All objects whose keys start with {@code prefix}, in lexical order, fetching pages lazily as the stream is
     * consumed. Store errors surface from the stream's terminal operation.
     */
    default Stream<ObjectMetadata> listAll(String prefix) {
        ObjectKey.requireValidPrefix(prefix);
        Iterator<ObjectMetadata> pages = new Iterator<>() {
            private Iterator<ObjectMetadata> current = null;
            private Optional<String> token = Optional.empty();
            private boolean last = false;

            @Override
            public boolean hasNext() {
                while (current == null || !current.hasNext()) {
                    if (last) {
                        return false;
                    }
                    ObjectPage page = list(prefix, token, 1000);
                    current = page.objects().iterator();
                    token = page.nextToken();
                    last = token.isEmpty();
                }
                return true;
            }

            @Override
            public ObjectMetadata next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return current.next();
            }
        };
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(pages,
                Spliterator.ORDERED | Spliterator.DISTINCT | Spliterator.NONNULL), false);
    }

    /** Deletes the object; deleting a key that does not exist succeeds and changes nothing. */
    void delete(ObjectKey key);

    /**
     * Deletes all the given objects, batching requests where the backend can (S3: 1000 keys per request).
     * Missing keys are ignored. Not atomic: on failure, some of the keys may have been deleted; repeat the
     * call to finish.
     *
     * @throws ObjectStoreException if any key could not be deleted, after attempting all of them
     */
    void deleteAll(Collection<ObjectKey> keys);

    /** Releases resources the store owns. Idempotent. */
    @Override
    void close();
}
