package io.tierlog.ingest;

import org.apache.kafka.common.utils.Utils;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

/**
 * Chooses a partition the way a Kafka client would: an explicit partition wins; else a keyed record goes to
 * {@code toPositive(murmur2(key)) % partitions} (kafka-clients' own hash, {@link Utils#murmur2}, as its built-in
 * partitioner computes it, so a key lands where a Kafka producer would put it); else the request's unkeyed records all go to one partition
 * (Kafka's "sticky" idea: one batch instead of many). With producer fields that partition is a function of the
 * producer id alone, so a retry lands where the original did and is deduplicated, and the producer's per-partition
 * sequence stays gapless; without them requests rotate over the partitions from a seeded start.
 */
public final class Partitioner {
    private final IntSupplier seedSource;
    /** Null until the first unkeyed request without producer fields; then the rotation counter. */
    private volatile AtomicInteger next;

    public Partitioner(int seed) {
        this(() -> seed);
    }

    /**
     * Seeds the rotation lazily, from {@code seedSource}, on the first unkeyed request without producer fields.
     * A process restored from a memory snapshot (Lambda SnapStart) then draws its seed after the restore, so
     * instances restored from one snapshot do not all start their rotation on the same partition.
     */
    public Partitioner(IntSupplier seedSource) {
        this.seedSource = seedSource;
    }

    public static int forKey(byte[] key, int partitions) {
        return Utils.toPositive(Utils.murmur2(key)) % partitions;
    }

    /** The partition for this request's unkeyed records. */
    public int forUnkeyed(ProduceRequest request, int partitions) {
        if (request.producer().isPresent()) {
            return forKey(request.producer().get().id().getBytes(StandardCharsets.UTF_8), partitions);
        }
        return Math.floorMod(rotation().getAndIncrement(), partitions);
    }

    private AtomicInteger rotation() {
        AtomicInteger n = next;
        if (n == null) {
            synchronized (this) {
                n = next;
                if (n == null) {
                    n = new AtomicInteger(seedSource.getAsInt() & Integer.MAX_VALUE);
                    next = n;
                }
            }
        }
        return n;
    }
}
