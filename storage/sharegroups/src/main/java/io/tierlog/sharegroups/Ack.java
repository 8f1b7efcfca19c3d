package io.tierlog.sharegroups;

/**
 * One acknowledgement of a request: the lease string as the consumer got it, and what it says. With a range lease
 * ({@link RangeLease}) {@code firstOffset} and {@code lastOffset} may narrow the run (null: the run's own bound); a
 * per-record lease is the run of its one offset.
 */
public record Ack(String lease, AckType type, Long firstOffset, Long lastOffset) {
    public Ack(String lease, AckType type) {
        this(lease, type, null, null);
    }
}
