package io.tierlog.client;

/** No answer from the service: it could not be reached, the connection broke, or the request timed out. */
public class UnavailableException extends TierlogException {
    public UnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
