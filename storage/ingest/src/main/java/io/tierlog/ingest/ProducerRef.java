package io.tierlog.ingest;

import io.tierlog.log.format.ProducerIdentity;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The optional idempotence fields of a produce request: a client-chosen producer id (any string, e.g. a UUID),
 * its epoch (0..32767, Kafka's short) and the request's sequence number (per producer id and partition).
 */
public record ProducerRef(String id, int epoch, int sequence) {
    /**
     * Kafka's batch header holds a 64-bit producer id. A decimal id that fits is used as is; any other id is
     * mapped by the first 63 bits of its SHA-256, so two distinct ids collide with probability ~2^-63.
     */
    public ProducerIdentity toIdentity() {
        return new ProducerIdentity(numericId(), (short) epoch, sequence);
    }

    private long numericId() {
        if (id.matches("[0-9]{1,18}")) {
            return Long.parseLong(id);
        }
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8));
            long v = 0;
            for (int i = 0; i < 8; i++) {
                v = (v << 8) | (d[i] & 0xff);
            }
            return v & Long.MAX_VALUE;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JVM", e);
        }
    }
}
