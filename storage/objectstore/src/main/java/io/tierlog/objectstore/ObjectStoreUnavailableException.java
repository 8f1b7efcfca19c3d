package io.tierlog.objectstore;

/**
 * The store could not be reached or refused to serve for now: connection failures, timeouts, HTTP 5xx,
 * throttling (503 SlowDown) — after the backend's own retries are spent. The operation may or may not have
 * taken effect (a PUT whose response was lost); every write in the SPI is safe to repeat, so retry later.
 * The service maps this to HTTP 503 {@code cold-tier-unavailable}.
 */
public class ObjectStoreUnavailableException extends ObjectStoreException {

    public ObjectStoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
