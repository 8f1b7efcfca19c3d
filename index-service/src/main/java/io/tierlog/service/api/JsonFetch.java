package io.tierlog.service.api;

import io.tierlog.http.Encoding;
import io.tierlog.log.BatchRead;
import io.tierlog.log.TopicPartition;
import io.tierlog.service.read.BatchFetch;
import io.tierlog.service.read.PartitionReads;

/**
 * The JSON fetch body (api.md, "Fetch") rendered from the stored batches ({@link PartitionReads#fetchBatches}) into
 * this thread's {@link JsonOut}: the same records, {@code nextOffset} and bounds as a record fetch
 * ({@link PartitionReads#fetch}) answers, without decoding a record into objects.
 *
 * <p>A batch read stops by batch bytes, a JSON fetch by its records' sizes, so when the batches read hold fewer
 * records than the limits allow, the next batches are read on from where they ended, until the limits or the end
 * of the log are reached. Each read's memory is given back as soon as its records are rendered. Thread-safe
 * (state is per call and per thread).
 */
final class JsonFetch {
    private JsonFetch() {
    }

    /** What {@link #render} wrote into {@code out}: a whole fetch body of {@code records} records. */
    record Rendered(JsonOut out, int records) {
    }

    /**
     * Renders the fetch from {@code offset} into this thread's {@link JsonOut} (valid until the thread renders
     * again).
     *
     * @throws io.tierlog.log.TierlogException as {@link PartitionReads#fetchBatches} (offset-out-of-range, ...)
     */
    static Rendered render(PartitionReads reads, TopicPartition tp, long offset, int maxRecords, int maxBytes,
                           Encoding encoding) {
        BatchFetch fetch = reads.fetchBatches(tp, offset, maxRecords, maxBytes);
        JsonOut out = JsonOut.forThisThread();
        StoredJson json = StoredJson.body(out, tp, encoding, maxRecords, maxBytes);
        long highWatermark = fetch.highWatermark();
        long logStartOffset = fetch.logStartOffset();
        long from = offset;
        while (true) {
            boolean full;
            try (BatchRead batches = fetch.batches()) {
                if (batches.isEmpty()) {
                    break;
                }
                full = json.add(batches.buffer(), from);
                from = batches.nextOffset();
            }
            highWatermark = Math.max(highWatermark, fetch.highWatermark());
            if (full) {
                break;
            }
            try {
                fetch = reads.fetchBatches(tp, from, Math.max(1, maxRecords - json.count()), maxBytes);
            } catch (RuntimeException e) {
                if (json.count() == 0) {
                    throw e;
                }
                break;   // e.g. retention overtook the read meanwhile: answer the records rendered so far
            }
        }
        // As a record fetch: the offset after the last record returned (the requested one when there is none).
        long nextOffset = json.count() == 0 ? offset : json.lastOffset() + 1;
        json.finishBody(nextOffset, Math.max(highWatermark, nextOffset), logStartOffset);
        return new Rendered(out, json.count());
    }
}
