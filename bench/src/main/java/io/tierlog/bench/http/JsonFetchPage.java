package io.tierlog.bench.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.io.InputStream;

/**
 * One JSON fetch response ({@code {"records": [{"offset", "value", ...}], "nextOffset", ...}}) read with Jackson's
 * streaming parser, as a consumer that only needs offsets and value sizes would: offsets must run densely from the
 * offset asked for, and value bytes are the JSON text of each string value (characters plus 2 quotes), the bytes
 * the service stored. The shared reader of the bench's JSON fetch clients.
 */
public record JsonFetchPage(long records, long valueBytes, long nextOffset) {
    private static final JsonFactory JSON = new JsonFactory();

    /**
     * @param from         the offset the fetch asked for: the first record's offset
     * @param onFirstValue run once, when the first value has been parsed (for time-to-first-record), or null
     */
    public static JsonFetchPage read(InputStream in, long from, Runnable onFirstValue) throws IOException {
        long next = from;
        long valueBytes = 0;
        long nextOffset = -1;
        boolean firstSeen = false;
        try (JsonParser p = JSON.createParser(in)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("fetch response is not a JSON object");
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
                                    throw new IOException("fetch gave offset " + offset + " where " + next
                                            + " was expected");
                                }
                                next++;
                            } else if ("value".equals(f) && v == JsonToken.VALUE_STRING) {
                                valueBytes += p.getTextLength() + 2;
                                if (!firstSeen && onFirstValue != null) {
                                    onFirstValue.run();
                                }
                                firstSeen = true;
                            } else {
                                p.skipChildren();
                            }
                        }
                    }
                } else if ("nextOffset".equals(field)) {
                    nextOffset = p.getLongValue();
                } else {
                    p.skipChildren();
                }
            }
        }
        if (nextOffset != next) {
            throw new IOException("fetch from " + from + " says nextOffset " + nextOffset + " after its records ended at "
                    + next);
        }
        return new JsonFetchPage(next - from, valueBytes, nextOffset);
    }
}
