package io.tierlog.objectstore;

/**
 * Any failure of an {@link ObjectStore} operation. Backends translate their own errors (SDK exceptions,
 * {@link java.io.IOException}) into this type or one of its subclasses at their boundary, so callers never
 * see a vendor type. A plain {@code ObjectStoreException} means the request was wrong or the store is
 * misconfigured (e.g. access denied, missing bucket); retrying will not help.
 */
public class ObjectStoreException extends RuntimeException {

    public ObjectStoreException(String message) {
        super(message);
    }

    public ObjectStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
