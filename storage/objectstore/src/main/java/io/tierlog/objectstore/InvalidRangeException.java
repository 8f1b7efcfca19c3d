package io.tierlog.objectstore;

/**
 * A ranged read started at or after the object's end (S3's 416 / InvalidRange). A range that starts inside
 * the object but runs past its end is not an error: it is clipped (see {@link ObjectStore#getRange}).
 */
public class InvalidRangeException extends ObjectStoreException {

    private final ObjectKey key;
    private final ByteRange range;

    public InvalidRangeException(ObjectKey key, ByteRange range, Throwable cause) {
        super("range " + range + " starts at or beyond the end of " + key, cause);
        this.key = key;
        this.range = range;
    }

    public ObjectKey key() {
        return key;
    }

    public ByteRange range() {
        return range;
    }
}
