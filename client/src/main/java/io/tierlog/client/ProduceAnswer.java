package io.tierlog.client;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;

/**
 * The parts of a produce answer ({@code {"offsets": [{"partition", "offset"}, ...], "duplicate"}}) the producer
 * needs: the first record's offset, how many offsets there are, and whether it was a duplicate. Read with Jackson's
 * streaming parser: the answer has an entry per record (hundreds per batch), and building a tree of it was the
 * producer's largest CPU cost after batch encoding. Fields it does not know are skipped (forward compatibility).
 */
record ProduceAnswer(long baseOffset, int count, boolean duplicate) {

    /** @throws IOException for a body that is not such an answer (no offsets, not JSON) */
    static ProduceAnswer parse(byte[] body) throws IOException {
        long base = -1;
        int count = 0;
        boolean duplicate = false;
        try (JsonParser p = HttpTransport.JSON.getFactory().createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("a produce answer is a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (field.equals("offsets") && value == JsonToken.START_ARRAY) {
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        if (count == 0) {
                            base = firstOffset(p);
                        } else {
                            p.skipChildren();
                        }
                        count++;
                    }
                } else if (field.equals("duplicate")) {
                    duplicate = value == JsonToken.VALUE_TRUE;
                } else {
                    p.skipChildren();
                }
            }
        }
        if (base < 0 || count == 0) {
            throw new IOException("no offsets in the answer");
        }
        return new ProduceAnswer(base, count, duplicate);
    }

    /** Reads an offsets entry to its end and returns its {@code offset} (-1 if absent). */
    private static long firstOffset(JsonParser p) throws IOException {
        long offset = -1;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            p.nextToken();
            if (field.equals("offset")) {
                offset = p.getValueAsLong(-1);
            } else {
                p.skipChildren();
            }
        }
        return offset;
    }
}
