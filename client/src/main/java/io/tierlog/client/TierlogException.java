package io.tierlog.client;

/**
 * A failure of a call to the service. {@link ProblemException} is an answer the service gave (an RFC 7807
 * problem); {@link UnavailableException} is no answer at all (connection refused or reset, a timeout).
 */
public class TierlogException extends RuntimeException {
    public TierlogException(String message) {
        super(message);
    }

    public TierlogException(String message, Throwable cause) {
        super(message, cause);
    }
}
