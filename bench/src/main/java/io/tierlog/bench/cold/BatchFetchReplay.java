package io.tierlog.bench.cold;

import io.tierlog.bench.batches.RecordBatchDecoder;

import io.tierlog.bench.http.BlockingHttp;

import java.net.URI;
import java.time.Duration;

/**
 * Replays a partition with binary paged fetches ({@code GET /v1/topics/{t}/partitions/0/records?offset=N
 * &maxRecords=M&maxBytes=B}, {@code Accept: application/vnd.tierlog.record-batches}), one request in flight, from
 * {@code from} through {@code last} (the last page asks for no more than up to {@code last}). Each body is read
 * batch by batch as it arrives ({@link RecordBatchDecoder#readBatch}: CRC checked, records decoded with
 * kafka-clients, records below the requested offset skipped, offsets dense); the next request starts where the
 * decoded records end, and the response's {@code Tierlog-Next-Offset} must equal the end of its last batch. Time to
 * first record: from sending the first request until its first batch holding a wanted record has been decoded.
 * Requests go through {@link BlockingHttp} ({@code HttpURLConnection}) over one keep-alive connection, which the
 * last page closes (so a later replay opens its own, as a new consumer would); every blocking read is bounded by
 * {@code timeout} too. Used from one thread.
 */
final class BatchFetchReplay {
    private BatchFetchReplay() {
    }

    static Replay run(URI base, String topic, long from, long last, int maxRecords, int maxBytes,
                      long objectBytes, Duration timeout) throws Exception {
        RecordBatchDecoder decoder = new RecordBatchDecoder(from, last + 1);
        long first = -1;
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        while (!decoder.done()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("binary fetch replay of " + topic + " timed out at offset "
                        + decoder.next());
            }
            long next = decoder.next();
            long want = Math.min(maxRecords, last - next + 1);
            URI uri = base.resolve("/v1/topics/" + topic + "/partitions/0/records?offset=" + next + "&maxRecords="
                    + want + "&maxBytes=" + maxBytes);
            BlockingHttp.Response r = BlockingHttp.get(uri, BlockingHttp.CONNECT_TIMEOUT, timeout,
                    "Accept", RecordBatchDecoder.MEDIA_TYPE);
            String header;
            try {
                if (r.status() != 200) {
                    throw new IllegalStateException("binary fetch at " + next + " answered " + r.status() + ": "
                            + r.text(2000));
                }
                RecordBatchDecoder.requireMediaType(r.header("Content-Type"), "binary fetch at " + next);
                header = r.header("Tierlog-Next-Offset");
                while (decoder.readBatch(r.body())) {
                    if (first < 0 && decoder.records() > 0) {
                        first = System.nanoTime() - start;
                    }
                }
            } finally {
                if (decoder.done()) {
                    r.disconnect();
                } else {
                    r.close();
                }
            }
            if (decoder.next() == next) {
                throw new IllegalStateException("binary fetch at offset " + next + " returned no records");
            }
            if (header != null && Long.parseLong(header) != decoder.batchesEnd()) {
                throw new IllegalStateException("binary fetch at " + next + ": Tierlog-Next-Offset " + header
                        + " but its last batch ends at " + decoder.batchesEnd());
            }
        }
        return new Replay(System.nanoTime() - start, first, decoder.records(), decoder.valueBytes(), objectBytes);
    }
}
