package io.tierlog.ingest;

import io.tierlog.log.AppendResult;

import java.util.AbstractList;
import java.util.List;

/**
 * The answer to a binary produce request ({@link IngestService#produceBatches}): all {@code recordCount} records
 * landed in {@code partition} at the dense offsets {@code baseOffset .. baseOffset + recordCount - 1}, in body
 * order. {@code duplicate} is true when the request was an idempotent producer's retry and nothing was appended
 * (the offsets are then the original ones). {@code logAppendTimeMs} is the time the batch was stamped with on a
 * {@code LogAppendTime} topic, else -1 (Kafka's produce response field of that name).
 *
 * <p>The HTTP answer (rendered by the http-contract module) is docs/api.md's produce response, the same as for a
 * JSON request: one {@code {"partition", "offset"}} entry per record, in body order.
 */
public record BatchProduceResult(int partition, long baseOffset, int recordCount, boolean duplicate,
                                 long logAppendTimeMs) {
    public BatchProduceResult {
        if (recordCount < 1) {
            throw new IllegalArgumentException("a produce request appends at least one record: " + recordCount);
        }
    }

    public BatchProduceResult(int partition, long baseOffset, int recordCount, boolean duplicate) {
        this(partition, baseOffset, recordCount, duplicate, AppendResult.NO_TIMESTAMP);
    }

    public long lastOffset() {
        return baseOffset + recordCount - 1;
    }

    /** One entry per record, in body order (a view computed on access; nothing is materialised). */
    public List<PartitionOffset> offsets() {
        return new AbstractList<>() {
            @Override
            public PartitionOffset get(int index) {
                if (index < 0 || index >= recordCount) {
                    throw new IndexOutOfBoundsException(index);
                }
                return new PartitionOffset(partition, baseOffset + index);
            }

            @Override
            public int size() {
                return recordCount;
            }
        };
    }

    /** The same answer in the JSON path's form. */
    public ProduceResult toProduceResult() {
        return new ProduceResult(offsets(), duplicate);
    }
}
