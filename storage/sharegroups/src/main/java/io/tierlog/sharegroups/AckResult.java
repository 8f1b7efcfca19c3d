package io.tierlog.sharegroups;

/**
 * The answer to one {@link Ack}: ok, or refused with {@code error} ("lease-expired"), nothing changed. Echoes the
 * ack's {@code firstOffset} and {@code lastOffset} (null when it had none).
 */
public record AckResult(String lease, boolean ok, String error, Long firstOffset, Long lastOffset) {
    public static final String LEASE_EXPIRED = "lease-expired";

    public AckResult(String lease, boolean ok, String error) {
        this(lease, ok, error, null, null);
    }

    static AckResult ok(Ack ack) {
        return new AckResult(ack.lease(), true, null, ack.firstOffset(), ack.lastOffset());
    }

    static AckResult expired(Ack ack) {
        return new AckResult(ack.lease(), false, LEASE_EXPIRED, ack.firstOffset(), ack.lastOffset());
    }
}
