package io.tierlog.access;

/**
 * Why a request was not authenticated. The client gets the same 401 for every one of them (no oracle telling a
 * guessed token from a revoked one); the audit log and {@code tierlog_auth_failures_total{reason}} get the reason.
 */
public enum AuthFailure {
    MISSING("missing"),
    MALFORMED("malformed"),
    UNKNOWN("unknown"),
    EXPIRED("expired"),
    REVOKED("revoked"),
    INVALID_JWT("invalid-jwt"),
    EXPIRED_JWT("expired-jwt");

    private final String reason;

    AuthFailure(String reason) {
        this.reason = reason;
    }

    /** The metric tag and log value. */
    public String reason() {
        return reason;
    }
}
