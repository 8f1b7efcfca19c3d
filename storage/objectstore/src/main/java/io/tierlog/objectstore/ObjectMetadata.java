package io.tierlog.objectstore;

import java.time.Instant;
import java.util.Objects;

/**
 * What a store knows about one object without reading it.
 *
 * @param key          the object's key
 * @param size         its length in bytes, {@code >= 0}
 * @param etag         an opaque version tag that changes whenever the object is rewritten. Compare it only
 *                     with tags from the same store; it is not a content hash (S3's multipart ETags are not
 *                     MD5s, and the filesystem backend derives it from the file's identity)
 * @param lastModified when the current version was written, by the store's clock
 */
public record ObjectMetadata(ObjectKey key, long size, String etag, Instant lastModified) {

    public ObjectMetadata {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(etag, "etag");
        Objects.requireNonNull(lastModified, "lastModified");
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0: " + size);
        }
    }
}
