package io.tierlog.bench.cold;

import io.tierlog.bench.batches.RecordBatchDecoder;

import io.tierlog.bench.http.BlockingHttp;

import java.io.InputStream;
import java.net.URI;
import java.time.Duration;

/**
 * Replays a partition over the service's binary stream ({@code GET /v1/topics/{t}/partitions/0/stream?offset=N},
 * {@code Accept: application/vnd.tierlog.record-batches}): a chunked body of Kafka record batches back to back,
 * read batch by batch as it arrives ({@link RecordBatchDecoder#readBatch}: CRC checked, records decoded with
 * kafka-clients, offsets dense from {@code from}), until the record at {@code last} has been decoded; then the
 * connection is dropped (the stream would go on tailing). Time to first record: from sending the request until
 * the first batch holding a record at or past {@code from} has been decoded. Read with {@link BlockingHttp}
 * ({@code HttpURLConnection}); every blocking read is bounded by {@code timeout} too. Used from one thread.
 */
final class BatchStreamReplay {
    private BatchStreamReplay() {
    }

    static Replay run(URI base, String topic, long from, long last, long objectBytes,
                      Duration timeout) throws Exception {
        URI uri = base.resolve("/v1/topics/" + topic + "/partitions/0/stream?offset=" + from);
        RecordBatchDecoder decoder = new RecordBatchDecoder(from, last + 1);
        long first = -1;
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        BlockingHttp.Response r = BlockingHttp.get(uri, BlockingHttp.CONNECT_TIMEOUT, timeout,
                "Accept", RecordBatchDecoder.MEDIA_TYPE);
        try {
            InputStream in = r.body();
            if (r.status() != 200) {
                throw new IllegalStateException("binary stream answered " + r.status() + ": " + r.text(2000));
            }
            RecordBatchDecoder.requireMediaType(r.header("Content-Type"), "binary stream");
            while (!decoder.done()) {
                if (!decoder.readBatch(in)) {
                    throw new IllegalStateException("binary stream ended at offset " + decoder.next() + " before "
                            + last);
                }
                if (first < 0 && decoder.records() > 0) {
                    first = System.nanoTime() - start;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("binary stream replay of " + topic + " timed out at offset "
                            + decoder.next());
                }
            }
        } finally {
            r.disconnect(); // the stream would go on tailing
        }
        return new Replay(System.nanoTime() - start, first, decoder.records(), decoder.valueBytes(), objectBytes);
    }
}
