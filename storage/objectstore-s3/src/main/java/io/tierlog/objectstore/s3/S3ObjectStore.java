package io.tierlog.objectstore.s3;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ChecksumMismatchException;
import io.tierlog.objectstore.Crc32cs;
import io.tierlog.objectstore.InvalidRangeException;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectNotFoundException;
import io.tierlog.objectstore.ObjectPage;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Error;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * {@link ObjectStore} over one S3 bucket and key prefix, with the AWS SDK v2 synchronous {@link S3Client}.
 *
 * <h2>How the contract is met</h2>
 * <ul>
 *   <li><b>Integrity.</b> Every upload carries a CRC32C this class computed from the bytes as read from the
 *       caller's array or file ({@code x-amz-checksum-crc32c}); S3 rejects the request (400 BadDigest) if what it
 *       received differs, and {@link #get} asks S3 to return the stored checksum, which the SDK verifies. Sending
 *       a precomputed value rather than letting the SDK stream a trailing checksum means the check covers our
 *       read of the file too, and works whatever checksum settings the injected client has.</li>
 *   <li><b>Large files</b> (above the part size) use multipart upload with a CRC32C per part. Parts are read
 *       into memory one at a time (one part-size buffer per concurrent upload). If anything fails, the upload is
 *       aborted so no parts linger (the bucket should still have an abort-incomplete-multipart lifecycle rule
 *       for crashes mid-upload). S3 makes the object visible only on CompleteMultipartUpload.</li>
 *   <li><b>{@link #putIfAbsent}</b> is a PUT with {@code If-None-Match: *}: S3 answers 412 if the key exists,
 *       atomically. A 409 ConditionalRequestConflict (a racing write in flight) is retried; the retry then
 *       sees 412 or succeeds.</li>
 *   <li><b>Errors</b> are translated by {@link S3Errors}: 404 → {@link ObjectNotFoundException}, 416 →
 *       {@link InvalidRangeException}, unreachable / 5xx / throttling (after the client's retry strategy) →
 *       {@link io.tierlog.objectstore.ObjectStoreUnavailableException}.</li>
 * </ul>
 *
 * <p>Thread-safe (as {@link S3Client} is). {@link #close()} closes the client only if this store built it
 * ({@link #builder()}); a client passed to the constructor belongs to the caller (e.g. the Quarkus container).
 */
public final class S3ObjectStore implements ObjectStore {

    /** Default multipart threshold and part size. */
    public static final int DEFAULT_PART_SIZE = 8 * 1024 * 1024;
    /** S3's minimum size of every part but the last. */
    public static final int MIN_PART_SIZE = 5 * 1024 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(S3ObjectStore.class);
    private static final int MAX_PARTS = 10_000;
    private static final int MAX_DELETE_BATCH = 1000;
    private static final int CONDITIONAL_CONFLICT_ATTEMPTS = 5;
    /** The most bytes {@link #getRange(ObjectKey, ByteRange, byte[], IntConsumer)} reads before it reports. */
    static final int ARRIVAL_STEP_BYTES = 256 * 1024;

    private final S3Client client;
    private final String bucket;
    private final String keyPrefix;
    private final int partSize;
    private final boolean ownsClient;

    /**
     * A store over {@code bucket}, keys under {@code keyPrefix}, using a client owned by the caller.
     *
     * @param keyPrefix "" or a path such as {@code "tierlog/prod"}; a '/' is appended if missing
     */
    public S3ObjectStore(S3Client client, String bucket, String keyPrefix) {
        this(client, bucket, keyPrefix, DEFAULT_PART_SIZE);
    }

    /** As {@link #S3ObjectStore(S3Client, String, String)}, with a multipart threshold and part size. */
    public S3ObjectStore(S3Client client, String bucket, String keyPrefix, int partSize) {
        this(client, bucket, keyPrefix, partSize, false);
    }

    S3ObjectStore(S3Client client, String bucket, String keyPrefix, int partSize, boolean ownsClient) {
        this.client = Objects.requireNonNull(client, "client");
        this.bucket = requireNonBlank(bucket, "bucket");
        this.keyPrefix = normalizePrefix(Objects.requireNonNull(keyPrefix, "keyPrefix"));
        if (partSize < MIN_PART_SIZE) {
            throw new IllegalArgumentException("partSize must be >= " + MIN_PART_SIZE + " (S3's minimum): " + partSize);
        }
        this.partSize = partSize;
        this.ownsClient = ownsClient;
    }

    /** A builder for plain (non-Quarkus) use that also builds and owns the client. */
    public static S3ObjectStoreBuilder builder() {
        return new S3ObjectStoreBuilder();
    }

    private static String normalizePrefix(String prefix) {
        if (prefix.isEmpty()) {
            return "";
        }
        if (prefix.startsWith("/")) {
            throw new IllegalArgumentException("key prefix must not start with '/': " + prefix);
        }
        return prefix.endsWith("/") ? prefix : prefix + "/";
    }

    private static String requireNonBlank(String value, String name) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + " must not be blank");
        }
        return value;
    }

    // ---- writes ----

    @Override
    public void put(ObjectKey key, Path file) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(file, "file");
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size <= partSize) {
                byte[] bytes = readFully(channel, 0, (int) size, file);
                if (channel.size() != size) {
                    throw new ChecksumMismatchException("source " + file + " changed size during upload", null);
                }
                putObject(key, bytes, false);
            } else {
                uploadMultipart(key, channel, size, file);
            }
        } catch (NoSuchFileException e) {
            throw new ObjectStoreException("source file does not exist: " + file, e);
        } catch (IOException e) {
            throw new ObjectStoreException("cannot read source file " + file, e);
        }
    }

    @Override
    public void put(ObjectKey key, byte[] bytes) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(bytes, "bytes");
        putObject(key, bytes, false);
    }

    private byte[] getOrNull(ObjectKey key) {
        try {
            return get(key);
        } catch (io.tierlog.objectstore.ObjectNotFoundException e) {
            return null;
        }
    }

    @Override
    public boolean putIfAbsent(ObjectKey key, byte[] bytes) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(bytes, "bytes");
        for (int attempt = 1; ; attempt++) {
            try {
                putObject(key, bytes, true);
                return true;
            } catch (PreconditionFailed e) {
                // The SDK retries a PUT whose response was lost; if the first attempt created the object, the
                // retry meets our own object and gets 412. Identical bytes mean the write is ours (or equivalent to
                // it), which is what the caller needs to know.
                return java.util.Arrays.equals(bytes, getOrNull(key));
            } catch (ConditionalConflict e) {
                if (attempt >= CONDITIONAL_CONFLICT_ATTEMPTS) {
                    throw S3Errors.translate("PUT (if absent)", key, bucket, e.cause);
                }
                LOG.debug("Conditional PUT of {} conflicted with a concurrent write; retrying", key);
            }
        }
    }

    private void putObject(ObjectKey key, byte[] bytes, boolean ifAbsent) {
        PutObjectRequest.Builder request = PutObjectRequest.builder()
                .bucket(bucket)
                .key(s3Key(key))
                .contentLength((long) bytes.length)
                .checksumCRC32C(Crc32cs.toBase64(Crc32cs.of(bytes)));
        if (ifAbsent) {
            request.ifNoneMatch("*");
        }
        try {
            client.putObject(request.build(), RequestBody.fromBytes(bytes));
        } catch (SdkException e) {
            throw conditionalOrTranslated(ifAbsent ? "PUT (if absent)" : "PUT", key, e);
        } catch (UncheckedIOException e) {
            throw S3Errors.unreachable("PUT", key, bucket, e);
        }
    }

    private RuntimeException conditionalOrTranslated(String operation, ObjectKey key, SdkException e) {
        int status = S3Errors.status(e);
        if (status == 412) {
            return new PreconditionFailed();
        }
        if (status == 409 && "ConditionalRequestConflict".equals(S3Errors.code(e))) {
            return new ConditionalConflict(e);
        }
        return S3Errors.translate(operation, key, bucket, e);
    }

    /** Internal signal: the conditional write found the key present. Never escapes this class. */
    private static final class PreconditionFailed extends RuntimeException {
        PreconditionFailed() {
            super(null, null, false, false);
        }
    }

    /** Internal signal: S3 asked us to retry a conditional write. Never escapes this class. */
    private static final class ConditionalConflict extends RuntimeException {
        final SdkException cause;

        ConditionalConflict(SdkException cause) {
            super(null, null, false, false);
            this.cause = cause;
        }
    }

    private void uploadMultipart(ObjectKey key, FileChannel channel, long size, Path file) throws IOException {
        // S3 allows at most 10,000 parts: grow the part size for huge files rather than fail.
        long effectivePart = Math.max(partSize, (size + MAX_PARTS - 1) / MAX_PARTS);
        String s3Key = s3Key(key);
        String uploadId;
        try {
            uploadId = client.createMultipartUpload(b -> b.bucket(bucket).key(s3Key)
                    .checksumAlgorithm(ChecksumAlgorithm.CRC32_C)).uploadId();
        } catch (SdkException e) {
            throw S3Errors.translate("CreateMultipartUpload", key, bucket, e);
        } catch (UncheckedIOException e) {
            throw S3Errors.unreachable("CreateMultipartUpload", key, bucket, e);
        }
        try {
            List<CompletedPart> parts = new ArrayList<>();
            long position = 0;
            for (int number = 1; position < size; number++) {
                int length = (int) Math.min(effectivePart, size - position);
                byte[] part = readFully(channel, position, length, file);
                String crc = Crc32cs.toBase64(Crc32cs.of(part));
                int partNumber = number;
                UploadPartResponse response = client.uploadPart(b -> b.bucket(bucket).key(s3Key).uploadId(uploadId)
                        .partNumber(partNumber).contentLength((long) length)
                        .checksumAlgorithm(ChecksumAlgorithm.CRC32_C).checksumCRC32C(crc),
                        RequestBody.fromBytes(part));
                parts.add(CompletedPart.builder().partNumber(partNumber).eTag(response.eTag())
                        .checksumCRC32C(crc).build());
                position += length;
            }
            if (channel.size() != size) {
                throw new ChecksumMismatchException("source " + file + " changed size during upload", null);
            }
            client.completeMultipartUpload(b -> b.bucket(bucket).key(s3Key).uploadId(uploadId)
                    .multipartUpload(m -> m.parts(parts)));
            LOG.debug("Uploaded {} ({} bytes) in {} parts", key, size, parts.size());
        } catch (IOException | RuntimeException e) {
            abort(key, s3Key, uploadId, e);
            if (e instanceof SdkException sdk) {
                throw S3Errors.translate("multipart PUT", key, bucket, sdk);
            }
            if (e instanceof UncheckedIOException unchecked) {
                throw S3Errors.unreachable("multipart PUT", key, bucket, unchecked);
            }
            throw e;
        }
    }

    private void abort(ObjectKey key, String s3Key, String uploadId, Exception failure) {
        try {
            client.abortMultipartUpload(b -> b.bucket(bucket).key(s3Key).uploadId(uploadId));
        } catch (SdkException | UncheckedIOException e) {
            // Leaves parts behind until the bucket's abort-incomplete-multipart lifecycle rule removes them.
            failure.addSuppressed(e);
            LOG.warn("Could not abort multipart upload {} of {}; the bucket lifecycle rule must collect it",
                    uploadId, key, e);
        }
    }

    private static byte[] readFully(FileChannel channel, long position, int length, Path file) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, position + buffer.position());
            if (n < 0) {
                throw new ChecksumMismatchException("source " + file + " shrank during upload", null);
            }
        }
        return buffer.array();
    }

    // ---- reads ----

    @Override
    public byte[] get(ObjectKey key) {
        Objects.requireNonNull(key, "key");
        try {
            // ChecksumMode.ENABLED: S3 returns the stored full-object CRC32C and the SDK verifies the body against
            // it (skipped for multipart objects, whose checksum is a checksum of part checksums).
            return client.getObjectAsBytes(b -> b.bucket(bucket).key(s3Key(key)).checksumMode(ChecksumMode.ENABLED))
                    .asByteArray();
        } catch (SdkException e) {
            throw S3Errors.translate("GET", key, bucket, e);
        } catch (UncheckedIOException e) {
            throw S3Errors.unreachable("GET", key, bucket, e);
        }
    }

    @Override
    public byte[] getRange(ObjectKey key, ByteRange range) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(range, "range");
        if (range.length() > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("range too long for one array: " + range);
        }
        // The body is read straight into one array of the answer's Content-Length: getObjectAsBytes would grow a
        // buffer and copy the bytes twice more, which on a cold replay is a large part of a fetch thread's CPU.
        return rangedGet(key, range, (body, response) -> rangeOf(body, response, key, range));
    }

    /** Reads the answer's body into {@code into} as it arrives, reporting each read (see the interface). */
    @Override
    public int getRange(ObjectKey key, ByteRange range, byte[] into, IntConsumer arrived) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(range, "range");
        if (into.length < range.length()) {
            throw new IllegalArgumentException("array of " + into.length + " bytes for " + range);
        }
        return rangedGet(key, range, (body, response) -> {
            Long length = response.contentLength();
            if (response.contentRange() == null || length == null || length < 0 || length > range.length()) {
                // A whole object for a ranged GET (a server that ignores Range), or no usable length: the bytes
                // are not the range's from the first one, so read them all and copy the range out.
                byte[] bytes = rangeOf(body, response, key, range);
                if (bytes.length > into.length) {
                    throw new IOException("GET " + range + " of " + key + ": " + bytes.length + " bytes answered");
                }
                System.arraycopy(bytes, 0, into, 0, bytes.length);
                arrived.accept(bytes.length);
                return bytes.length;
            }
            int expected = length.intValue();
            int got = 0;
            while (got < expected) {
                // At most a slice per read: a socket buffer can hold megabytes, and one read of all of them would
                // report the range only at its end.
                int n = body.read(into, got, Math.min(expected - got, ARRIVAL_STEP_BYTES));
                if (n < 0) {
                    throw new IOException("GET " + range + " of " + key + ": body ended after " + got + " of its "
                            + expected + " bytes");
                }
                got += n;
                arrived.accept(got);
            }
            if (body.read() >= 0) {
                throw new IOException("GET " + range + " of " + key + ": body longer than its " + expected + " bytes");
            }
            if (expected == 0) {
                arrived.accept(0);
            }
            return expected;
        });
    }

    /** What a ranged GET's answer is read with; an {@link IOException} is a failed GET. */
    @FunctionalInterface
    private interface RangeAnswerReader<T> {
        T read(ResponseInputStream<GetObjectResponse> body, GetObjectResponse response) throws IOException;
    }

    /** One ranged GET, its answer read by {@code reader}, its failures translated to the store's exceptions. */
    private <T> T rangedGet(ObjectKey key, ByteRange range, RangeAnswerReader<T> reader) {
        try (ResponseInputStream<GetObjectResponse> body =
                     client.getObject(b -> b.bucket(bucket).key(s3Key(key)).range(range.toHttpRange()))) {
            return reader.read(body, body.response());
        } catch (SdkException e) {
            if (S3Errors.status(e) == 416) {
                throw new InvalidRangeException(key, range, e);
            }
            throw S3Errors.translate("GET " + range, key, bucket, e);
        } catch (UncheckedIOException e) {
            throw S3Errors.unreachable("GET " + range, key, bucket, e);
        } catch (IOException e) {
            throw S3Errors.unreachable("GET " + range, key, bucket, new UncheckedIOException(e));
        }
    }

    /** The range's bytes from its GET's whole body, cut out of the object if the server ignored {@code Range}. */
    private static byte[] rangeOf(ResponseInputStream<GetObjectResponse> body, GetObjectResponse response,
                                  ObjectKey key, ByteRange range) throws IOException {
        byte[] bytes = readBody(body, response.contentLength(), key, range);
        if (response.contentRange() == null) {
            // A server that ignores Range answers 200 with the whole object; honour the contract regardless.
            if (range.offset() >= bytes.length) {
                throw new InvalidRangeException(key, range, null);
            }
            return Arrays.copyOfRange(bytes, (int) range.offset(), (int) Math.min(range.end(), bytes.length));
        }
        return bytes;
    }

    /** Exactly {@code length} bytes of a GET's body; a body that ends early or runs long is a failed GET. */
    private static byte[] readBody(ResponseInputStream<GetObjectResponse> body, Long length, ObjectKey key,
                                   ByteRange range) throws IOException {
        if (length == null || length < 0 || length > Integer.MAX_VALUE - 8) {
            return body.readAllBytes(); // no usable Content-Length: read to the end
        }
        byte[] bytes = new byte[length.intValue()];
        int n = body.readNBytes(bytes, 0, bytes.length);
        if (n != bytes.length) {
            throw new IOException("GET " + range + " of " + key + ": body ended after " + n + " of its "
                    + length + " bytes");
        }
        if (body.read() >= 0) {
            throw new IOException("GET " + range + " of " + key + ": body longer than its " + length + " bytes");
        }
        return bytes;
    }

    @Override
    public Optional<ObjectMetadata> head(ObjectKey key) {
        Objects.requireNonNull(key, "key");
        try {
            HeadObjectResponse response = client.headObject(b -> b.bucket(bucket).key(s3Key(key)));
            return Optional.of(new ObjectMetadata(key, response.contentLength(), unquote(response.eTag()),
                    response.lastModified()));
        } catch (SdkException e) {
            if (S3Errors.status(e) == 404 && !"NoSuchBucket".equals(S3Errors.code(e))) {
                return Optional.empty();
            }
            throw S3Errors.translate("HEAD", key, bucket, e);
        } catch (UncheckedIOException e) {
            throw S3Errors.unreachable("HEAD", key, bucket, e);
        }
    }

    @Override
    public ObjectPage list(String prefix, Optional<String> pageToken, int maxKeys) {
        ObjectKey.requireValidPrefix(prefix);
        Objects.requireNonNull(pageToken, "pageToken");
        if (maxKeys < 1 || maxKeys > 1000) {
            throw new IllegalArgumentException("maxKeys must be 1..1000: " + maxKeys);
        }
        ListObjectsV2Response response;
        try {
            response = client.listObjectsV2(b -> b.bucket(bucket).prefix(keyPrefix + prefix).maxKeys(maxKeys)
                    .continuationToken(pageToken.orElse(null)));
        } catch (SdkException e) {
            throw S3Errors.translate("LIST '" + prefix + "'", null, bucket, e);
        } catch (UncheckedIOException e) {
            throw S3Errors.unreachable("LIST '" + prefix + "'", null, bucket, e);
        }
        List<ObjectMetadata> objects = new ArrayList<>(response.contents().size());
        for (var object : response.contents()) {
            String relative = object.key().substring(keyPrefix.length());
            objects.add(new ObjectMetadata(new ObjectKey(relative), object.size(), unquote(object.eTag()),
                    object.lastModified()));
        }
        boolean more = Boolean.TRUE.equals(response.isTruncated()) && response.nextContinuationToken() != null;
        return new ObjectPage(objects, more ? Optional.of(response.nextContinuationToken()) : Optional.empty());
    }

    // ---- deletes ----

    @Override
    public void delete(ObjectKey key) {
        Objects.requireNonNull(key, "key");
        try {
            client.deleteObject(b -> b.bucket(bucket).key(s3Key(key))); // S3 answers 204 for a missing key too
        } catch (SdkException e) {
            if (S3Errors.status(e) == 404 && !"NoSuchBucket".equals(S3Errors.code(e))) {
                return;
            }
            throw S3Errors.translate("DELETE", key, bucket, e);
        } catch (UncheckedIOException e) {
            throw S3Errors.unreachable("DELETE", key, bucket, e);
        }
    }

    @Override
    public void deleteAll(Collection<ObjectKey> keys) {
        List<ObjectKey> all = List.copyOf(keys);
        List<String> failures = new ArrayList<>();
        ObjectStoreException firstError = null;
        for (int from = 0; from < all.size(); from += MAX_DELETE_BATCH) {
            List<ObjectIdentifier> batch = all.subList(from, Math.min(all.size(), from + MAX_DELETE_BATCH)).stream()
                    .map(key -> ObjectIdentifier.builder().key(s3Key(key)).build())
                    .toList();
            try {
                // quiet: S3 lists only the failures, keeping the response small for 1000-key batches.
                DeleteObjectsResponse response = client.deleteObjects(b -> b.bucket(bucket)
                        .delete(d -> d.objects(batch).quiet(true)));
                for (S3Error error : response.errors()) {
                    failures.add(error.key() + " (" + error.code() + ")");
                }
            } catch (SdkException | UncheckedIOException e) {
                ObjectStoreException translated = e instanceof SdkException sdk
                        ? S3Errors.translate("DeleteObjects", null, bucket, sdk)
                        : S3Errors.unreachable("DeleteObjects", null, bucket, (UncheckedIOException) e);
                if (firstError == null) {
                    firstError = translated;
                } else {
                    firstError.addSuppressed(translated);
                }
            }
        }
        if (firstError != null) {
            throw firstError;
        }
        if (!failures.isEmpty()) {
            throw new ObjectStoreException("could not delete " + failures.size() + " of " + all.size()
                    + " objects in bucket " + bucket + ": " + failures, null);
        }
    }

    @Override
    public void close() {
        if (ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "S3ObjectStore[s3://" + bucket + "/" + keyPrefix + "]";
    }

    private String s3Key(ObjectKey key) {
        return keyPrefix + key.value();
    }

    private static String unquote(String etag) {
        if (etag == null) {
            return "";
        }
        return etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"")
                ? etag.substring(1, etag.length() - 1) : etag;
    }
}
