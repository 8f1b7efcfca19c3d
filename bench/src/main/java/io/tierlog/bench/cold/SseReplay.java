package io.tierlog.bench.cold;

import io.tierlog.bench.http.BlockingHttp;

import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Replays a partition over the service's SSE stream ({@code GET /v1/topics/{t}/partitions/{p}/stream?offset=N},
 * {@code Accept: text/event-stream}) from {@code from} until the event of {@code last} has been read, then drops
 * the connection (the stream would go on tailing). Checks that the {@code record} events' ids run densely from
 * {@code from}, and sums each record's value length. Time to first record: from sending the request until the
 * first {@code event: record} is complete (its terminating blank line parsed). Read with {@link BlockingHttp}
 * ({@code HttpURLConnection}); every blocking read is bounded by {@code timeout} too. Used from one thread.
 */
final class SseReplay {
    private SseReplay() {
    }

    static Replay run(URI base, String topic, long from, long last, long objectBytes,
                      Duration timeout) throws Exception {
        URI uri = base.resolve("/v1/topics/" + topic + "/partitions/0/stream?offset=" + from);
        long[] next = {from};
        long[] valueBytes = {0};
        long[] first = {-1};
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        SseParser parser = new SseParser((id, event, data, length) -> {
            if ("error".equals(event)) {
                throw new IllegalStateException("stream error event at offset " + next[0] + ": "
                        + new String(data, 0, length, StandardCharsets.UTF_8));
            }
            if (!"record".equals(event) || next[0] > last) {
                return; // heartbeats; records past the cold range that arrived in the same read
            }
            if (first[0] < 0) {
                first[0] = System.nanoTime() - start;
            }
            long offset = Long.parseLong(id);
            if (offset != next[0]) {
                throw new IllegalStateException("stream gave offset " + offset + " where " + next[0] + " was expected");
            }
            int v = RecordValues.jsonStringValueLength(data, length);
            if (v < 0) {
                throw new IllegalStateException("record " + offset + " has no JSON string value");
            }
            valueBytes[0] += v;
            next[0]++;
        });
        BlockingHttp.Response r = BlockingHttp.get(uri, BlockingHttp.CONNECT_TIMEOUT, timeout, "Accept", "text/event-stream");
        try {
            InputStream in = r.body();
            if (r.status() != 200) {
                throw new IllegalStateException("stream answered " + r.status() + ": " + r.text(2000));
            }
            byte[] buffer = new byte[64 * 1024];
            int n;
            while (next[0] <= last && (n = in.read(buffer)) >= 0) {
                parser.feed(buffer, 0, n);
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("stream replay of " + topic + " timed out at offset " + next[0]);
                }
            }
        } finally {
            r.disconnect(); // the stream would go on tailing
        }
        long nanos = System.nanoTime() - start;
        if (next[0] <= last) {
            throw new IllegalStateException("stream ended at offset " + next[0] + " before " + last);
        }
        return new Replay(nanos, first[0], next[0] - from, valueBytes[0], objectBytes);
    }
}
