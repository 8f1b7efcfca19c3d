package io.tierlog.bench.cold;

import io.tierlog.bench.http.BlockingHttp;
import io.tierlog.bench.http.JsonFetchPage;

import java.net.URI;
import java.time.Duration;

/**
 * Replays a partition with paged fetches ({@code GET /v1/topics/{t}/partitions/0/records?offset=N&maxRecords=M
 * &maxBytes=B}), one request in flight, each response parsed with Jackson's streaming parser, from {@code from}
 * through {@code last} (the last page asks for no more than up to {@code last}). Checks that offsets run densely and
 * sums the value lengths (the JSON text of each string value, quotes included). Time to first record: from sending
 * the first request until the first record's value has been parsed. Requests go through {@link BlockingHttp}
 * ({@code HttpURLConnection}) over one keep-alive connection, which the last page closes (so a later replay opens
 * its own, as a new consumer would); every blocking read is bounded by {@code timeout} too. Used from one thread.
 */
final class FetchReplay {
    private FetchReplay() {
    }

    static Replay run(URI base, String topic, long from, long last, int maxRecords, int maxBytes,
                      long objectBytes, Duration timeout) throws Exception {
        long next = from;
        long valueBytes = 0;
        long first = -1;
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        while (next <= last) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("fetch replay of " + topic + " timed out at offset " + next);
            }
            long want = Math.min(maxRecords, last - next + 1);
            URI uri = base.resolve("/v1/topics/" + topic + "/partitions/0/records?offset=" + next + "&maxRecords="
                    + want + "&maxBytes=" + maxBytes);
            BlockingHttp.Response r = BlockingHttp.get(uri, BlockingHttp.CONNECT_TIMEOUT, timeout);
            try {
                if (r.status() != 200) {
                    throw new IllegalStateException("fetch at " + next + " answered " + r.status() + ": "
                            + r.text(2000));
                }
                long[] firstAt = {-1};
                JsonFetchPage page = JsonFetchPage.read(r.body(), next, () -> firstAt[0] = System.nanoTime() - start);
                if (first < 0) {
                    first = firstAt[0];
                }
                if (page.records() == 0) {
                    throw new IllegalStateException("fetch at offset " + next + " returned no records");
                }
                valueBytes += page.valueBytes();
                next = page.nextOffset();
            } finally {
                if (next > last) {
                    r.disconnect();
                } else {
                    r.close();
                }
            }
        }
        return new Replay(System.nanoTime() - start, first, next - from, valueBytes, objectBytes);
    }
}
