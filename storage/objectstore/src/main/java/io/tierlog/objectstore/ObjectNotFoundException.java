package io.tierlog.objectstore;

/** The object does not exist (S3's 404 / NoSuchKey). */
public class ObjectNotFoundException extends ObjectStoreException {

    private final ObjectKey key;

    public ObjectNotFoundException(ObjectKey key) {
        this(key, null);
    }

    public ObjectNotFoundException(ObjectKey key, Throwable cause) {
        super("object not found: " + key, cause);
        this.key = key;
    }

    public ObjectKey key() {
        return key;
    }
}
