package io.tierlog.ingest;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.format.ProducerIdentity;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The optional idempotence fields of a produce request: a client-chosen producer id (any string, e.g. a UUID), its
 * epoch (0..32767, Kafka's short) and the sequence of the request's first record in each partition it touches, in
 * Kafka's numbering (a sequence counts records per producer id and partition). Either {@code sequence} (a request
 * whose records all land in one partition) or {@code sequences} (partition → sequence, one entry per partition the
 * request touches) is set, never both.
 */
public record ProducerRef(String id, int epoch, Integer sequence, SortedMap<Integer, Integer> sequences) {
    public ProducerRef {
        if ((sequence == null) == (sequences == null)) {
            throw new IllegalArgumentException("exactly one of sequence and sequences is set");
        }
        sequences = sequences == null ? null : new TreeMap<>(sequences);
    }

    /** A request whose records all land in one partition. */
    public ProducerRef(String id, int epoch, int sequence) {
        this(id, epoch, sequence, null);
    }

    /** A request spanning the partitions of {@code sequences}. */
    public ProducerRef(String id, int epoch, Map<Integer, Integer> sequences) {
        this(id, epoch, null, new TreeMap<>(sequences));
    }

    /**
     * The producer fields of each partition the request's records land in.
     *
     * @throws TierlogException {@code bad-request} naming {@code producer.sequences} when the sequences given do not
     *                          name exactly the partitions touched
     */
    public Map<Integer, ProducerIdentity> identities(Set<Integer> partitions) {
        long numericId = numericId();
        Map<Integer, ProducerIdentity> out = new TreeMap<>();
        if (sequence != null) {
            if (partitions.size() > 1) {
                throw bad("the records land in partitions " + partitions + ": a request spanning several partitions "
                        + "gives producer.sequences, {\"<partition>\": sequence, ...}, one entry per partition");
            }
            partitions.forEach(p -> out.put(p, new ProducerIdentity(numericId, (short) epoch, sequence)));
            return out;
        }
        for (int p : partitions) {
            Integer s = sequences.get(p);
            if (s == null) {
                throw bad("producer.sequences has no entry for partition " + p + ", where records of this request "
                        + "land; it needs one per partition " + partitions);
            }
            out.put(p, new ProducerIdentity(numericId, (short) epoch, s));
        }
        for (int p : sequences.keySet()) {
            if (!partitions.contains(p)) {
                throw bad("producer.sequences names partition " + p + ", where no record of this request lands; "
                        + "it needs one entry per partition " + partitions);
            }
        }
        return out;
    }

    private static TierlogException bad(String detail) {
        return new TierlogException(ErrorType.BAD_REQUEST, detail, Map.of("field", "producer.sequences"));
    }

    /**
     * Kafka's batch header holds a 64-bit producer id. A decimal id that fits is used as is; any other id is
     * mapped by the first 63 bits of its SHA-256, so two distinct ids collide with probability ~2^-63.
     */
    public long numericId() {
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
