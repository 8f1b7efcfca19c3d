package io.tierlog.ingest;

import org.apache.kafka.common.utils.Utils;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
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

    /**
     * As {@link #forKey(byte[], int)} for the key {@code data[off, off + length)}, without copying it out: kafka-clients'
     * {@link Utils#murmur2} takes a whole array, and a parser that keeps keys in a shared buffer would otherwise
     * allocate one per record. The same arithmetic, line for line (PartitionerTest checks it against kafka-clients).
     */
    public static int forKey(byte[] data, int off, int length, int partitions) {
        final int m = 0x5bd1e995;
        final int r = 24;
        int h = 0x9747b28c ^ length;
        int length4 = length / 4;
        for (int i = 0; i < length4; i++) {
            final int i4 = off + i * 4;
            int k = (data[i4] & 0xff) + ((data[i4 + 1] & 0xff) << 8) + ((data[i4 + 2] & 0xff) << 16)
                    + ((data[i4 + 3] & 0xff) << 24);
            k *= m;
            k ^= k >>> r;
            k *= m;
            h *= m;
            h ^= k;
        }
        int tail = off + (length & ~3);
        switch (length % 4) {
            case 3:
                h ^= (data[tail + 2] & 0xff) << 16;
            // fall through
            case 2:
                h ^= (data[tail + 1] & 0xff) << 8;
            // fall through
            case 1:
                h ^= data[tail] & 0xff;
                h *= m;
            // fall through
            default:
                break;
        }
        h ^= h >>> 13;
        h *= m;
        h ^= h >>> 15;
        return Utils.toPositive(h) % partitions;
    }

    /** The partition for this request's unkeyed records. */
    public int forUnkeyed(ProduceRequest request, int partitions) {
        return forUnkeyed(request.producer(), partitions);
    }

    /** The partition for the unkeyed records of a request with these producer fields. */
    public int forUnkeyed(Optional<ProducerRef> producer, int partitions) {
        if (producer.isPresent()) {
            return forKey(producer.get().id().getBytes(StandardCharsets.UTF_8), partitions);
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
