package io.tierlog.sharegroups;

/** The answer to one {@link Ack}: ok, or refused with {@code error} ("lease-expired"), nothing changed. */
public record AckResult(String lease, boolean ok, String error) {
    public static final String LEASE_EXPIRED = "lease-expired";

    static AckResult ok(String lease) {
        return new AckResult(lease, true, null);
    }

    static AckResult expired(String lease) {
        return new AckResult(lease, false, LEASE_EXPIRED);
    }
}
