package io.tierlog.access;

/** A scope string that does not parse; the message names the offending scope. */
public final class InvalidScopeException extends IllegalArgumentException {
    public InvalidScopeException(String message) {
        super(message);
    }
}
