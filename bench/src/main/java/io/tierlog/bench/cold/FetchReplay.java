package io.tierlog.bench.cold;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import io.tierlog.bench.http.BlockingHttp;

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
    private static final JsonFactory JSON = new JsonFactory();

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
                long before = next;
                try (JsonParser p = JSON.createParser(r.body())) {
                    if (p.nextToken() != JsonToken.START_OBJECT) {
                        throw new IllegalStateException("fetch response is not a JSON object");
                    }
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String field = p.currentName();
                        JsonToken t = p.nextToken();
                        if ("records".equals(field) && t == JsonToken.START_ARRAY) {
                            while (p.nextToken() == JsonToken.START_OBJECT) {
                                while (p.nextToken() == JsonToken.FIELD_NAME) {
                                    String f = p.currentName();
                                    JsonToken v = p.nextToken();
                                    if ("offset".equals(f)) {
                                        long offset = p.getLongValue();
                                        if (offset != next) {
                                            throw new IllegalStateException("fetch gave offset " + offset + " where "
                                                    + next + " was expected");
                                        }
                                        next++;
                                    } else if ("value".equals(f) && v == JsonToken.VALUE_STRING) {
                                        valueBytes += p.getTextLength() + 2;
                                        if (first < 0) {
                                            first = System.nanoTime() - start;
                                        }
                                    } else {
                                        p.skipChildren();
                                    }
                                }
                            }
                        } else {
                            p.skipChildren();
                        }
                    }
                }
                if (next == before) {
                    throw new IllegalStateException("fetch at offset " + next + " returned no records");
                }
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
