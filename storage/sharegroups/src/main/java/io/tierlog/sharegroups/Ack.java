package io.tierlog.sharegroups;

/** One acknowledgement of a request: the lease string as the consumer got it, and what it says. */
public record Ack(String lease, AckType type) {
}
