package io.tierlog.ingest;

import java.nio.charset.StandardCharsets;
import java.util.AbstractList;
import java.util.List;

/**
 * The answer to a binary produce request ({@link IngestService#produceBatches}): all {@code recordCount} records
 * landed in {@code partition} at the dense offsets {@code baseOffset .. baseOffset + recordCount - 1}, in body
 * order. {@code duplicate} is true when the request was an idempotent producer's retry and nothing was appended
 * (the offsets are then the original ones).
 *
 * <p>The HTTP answer is docs/api.md's produce response, the same as for a JSON request: one
 * {@code {"partition", "offset"}} entry per record, in body order ({@link #toJson()}). It is about 30 bytes per record
 * (30 KB for 1000 records); a client that wants less can read {@code offsets[0]} and the count, since the offsets
 * are dense. A compact form is deliberately not invented here, so that every produce answer has one shape.
 */
public record BatchProduceResult(int partition, long baseOffset, int recordCount, boolean duplicate) {
    public BatchProduceResult {
        if (recordCount < 1) {
            throw new IllegalArgumentException("a produce request appends at least one record: " + recordCount);
        }
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

    /**
     * docs/api.md's produce response, byte for byte what {@link IngestService#toJson(ProduceResult)} renders for
     * {@link #toProduceResult()}: {@code {"offsets":[{"partition":P,"offset":O},...],"duplicate":false}}. Written
     * directly (no JSON tree), since it is all digits and fixed text.
     */
    public byte[] toJson() {
        String entryHead = "{\"partition\":" + partition + ",\"offset\":";
        StringBuilder out = new StringBuilder(40 + recordCount * (entryHead.length() + 22) + 24);
        out.append("{\"offsets\":[");
        for (int i = 0; i < recordCount; i++) {
            if (i > 0) {
                out.append(',');
            }
            out.append(entryHead).append(baseOffset + i).append('}');
        }
        out.append("],\"duplicate\":").append(duplicate).append('}');
        return out.toString().getBytes(StandardCharsets.US_ASCII);
    }
}
