package io.tierlog.log.compaction;

import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * Key &rarr; offset of its latest record, within a memory budget, as Kafka's cleaner bounds its map
 * ({@code log.cleaner.dedupe.buffer.size}). A pass maps whole dirty segments, oldest first, while the map is under
 * budget, and cleans only as far as it mapped; the rest waits for the next pass. So the budget is exceeded by at most
 * one segment's keys, and a pass always maps at least one segment (it always makes progress). Not thread-safe.
 */
public final class KeyMap {
    /**
     * The default budget per pass: half of Kafka's default dedupe buffer, since a node runs a hot and a cold pass at
     * once and the service's heap is often 512 MiB. About 500,000 keys of 20 bytes.
     */
    public static final long DEFAULT_BUDGET_BYTES = 64L * 1024 * 1024;
    /**
     * Heap bytes one entry costs besides its key's bytes (64-bit JVM, compressed oops): the HashMap node, the
     * ByteBuffer, the byte[] header and the boxed offset.
     */
    static final int ENTRY_OVERHEAD_BYTES = 112;

    private final Map<ByteBuffer, Long> latest = new HashMap<>();
    private final long budgetBytes;
    private long bytes;

    public KeyMap(long budgetBytes) {
        if (budgetBytes < 1) {
            throw new IllegalArgumentException("key map budget must be positive: " + budgetBytes);
        }
        this.budgetBytes = budgetBytes;
    }

    /** Records {@code offset} as the latest of {@code key} (a copy the map owns). */
    void put(ByteBuffer key, long offset) {
        if (latest.put(key, offset) == null) {
            bytes += key.remaining() + ENTRY_OVERHEAD_BYTES;
        }
    }

    /**
     * Maps the keyed records of {@code batch}, later ones overwriting. Only committed and non-transactional records
     * count as a key's value: a control batch holds no data, and a record of an aborted transaction never was a
     * value (mapping it would let it shadow the committed value before it). Keys are copied: the map outlives the
     * read buffers.
     */
    void add(RecordBatch batch, AbortedBatches aborted) {
        if (batch.isControlBatch() || aborted.contains(batch)) {
            return;
        }
        for (Record r : batch) {
            if (r.hasKey()) {
                put(ByteBuffer.allocate(r.keySize()).put(r.key()).flip(), r.offset());
            }
        }
    }

    /** The offset of the latest record of {@code key}, or null if it is not mapped. */
    Long latest(ByteBuffer key) {
        return latest.get(key);
    }

    /** True once the mapped keys cost the budget: map no further segment in this pass. */
    public boolean full() {
        return bytes >= budgetBytes;
    }

    public int size() {
        return latest.size();
    }
}
