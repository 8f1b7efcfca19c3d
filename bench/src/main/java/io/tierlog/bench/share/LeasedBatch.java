package io.tierlog.bench.share;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * One Tierlog lease answer ({@code {"records": [{"lease", "partition", "offset", "deliveryCount", "timestamp", "key",
 * "value", "headers", ...}]}}, docs/api.md "Share groups") read in one streaming pass: each record's lease string,
 * partition and offset, and its value materialized as bytes (base64-decoded when the record says
 * {@code "valueEncoding": "base64"}, else the UTF-8 of a string value or the text of another scalar), as a
 * {@code KafkaShareConsumer} with a {@code ByteArrayDeserializer} copies each value out of its fetch buffer. Keys and
 * headers are skipped (the bench's records have none). No tree of the ~700 KB answer is built. Immutable.
 */
record LeasedBatch(List<String> leases, long[] partitions, long[] offsets, long valueBytes) {
    private static final JsonFactory FACTORY = new JsonFactory();

    int size() {
        return leases.size();
    }

    boolean isEmpty() {
        return leases.isEmpty();
    }

    /** Reads an answer; an answer of another shape is an {@link IllegalStateException} naming what was found. */
    static LeasedBatch read(byte[] answer) {
        try (JsonParser p = FACTORY.createParser(answer)) {
            expect(p.nextToken(), JsonToken.START_OBJECT, "the answer");
            List<String> leases = new ArrayList<>();
            List<long[]> at = new ArrayList<>();
            long valueBytes = 0;
            boolean sawRecords = false;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                if (!"records".equals(p.currentName())) {
                    p.nextToken();
                    p.skipChildren();
                    continue;
                }
                sawRecords = true;
                expect(p.nextToken(), JsonToken.START_ARRAY, "records");
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    expect(p.currentToken(), JsonToken.START_OBJECT, "a record");
                    String lease = null;
                    long partition = -1;
                    long offset = -1;
                    String value = null;
                    boolean base64 = false;
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String name = p.currentName();
                        JsonToken t = p.nextToken();
                        switch (name) {
                            case "lease" -> lease = p.getText();
                            case "partition" -> partition = p.getLongValue();
                            case "offset" -> offset = p.getLongValue();
                            case "value" -> value = t.isScalarValue() && t != JsonToken.VALUE_NULL ? p.getText() : null;
                            case "valueEncoding" -> base64 = "base64".equals(p.getText());
                            default -> p.skipChildren(); // a no-op for scalars
                        }
                        if ("value".equals(name) && t.isStructStart()) {
                            p.skipChildren(); // not in the bench's records
                        }
                    }
                    if (lease == null || partition < 0 || offset < 0) {
                        throw new IllegalStateException("a leased record without lease, partition or offset");
                    }
                    if (value != null) {
                        byte[] bytes = base64 ? Base64.getDecoder().decode(value) : value.getBytes(StandardCharsets.UTF_8);
                        valueBytes += bytes.length;
                    }
                    leases.add(lease);
                    at.add(new long[] {partition, offset});
                }
            }
            if (!sawRecords) {
                throw new IllegalStateException("a lease answer without records");
            }
            long[] partitions = new long[at.size()];
            long[] offsets = new long[at.size()];
            for (int i = 0; i < at.size(); i++) {
                partitions[i] = at.get(i)[0];
                offsets[i] = at.get(i)[1];
            }
            return new LeasedBatch(List.copyOf(leases), partitions, offsets, valueBytes);
        } catch (IOException e) {
            throw new IllegalStateException("a lease answer that is not JSON: " + e.getMessage(), e);
        }
    }

    /** {@code {"acks": [{"lease": ..., "type": "accept"}, ...]}} for every record of this batch. */
    byte[] acceptAll() {
        StringBuilder sb = new StringBuilder(16 + leases.size() * 128);
        sb.append("{\"acks\":[");
        for (int i = 0; i < leases.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            // Lease strings are base64url (docs/api.md: opaque; ours never need JSON escaping), checked anyway.
            String lease = leases.get(i);
            for (int c = 0; c < lease.length(); c++) {
                char ch = lease.charAt(c);
                if (ch == '"' || ch == '\\' || ch < 0x20) {
                    throw new IllegalStateException("a lease string that needs escaping: " + lease);
                }
            }
            sb.append("{\"lease\":\"").append(lease).append("\",\"type\":\"accept\"}");
        }
        return sb.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Checks an acks answer ({@code {"results": [{"lease", "ok", "error"?}]}}) in one streaming pass: as many results
     * as this batch has records, every one {@code "ok": true}; else an {@link IllegalStateException} with the first
     * refusal.
     */
    int requireAllAccepted(byte[] answer) {
        try (JsonParser p = FACTORY.createParser(answer)) {
            expect(p.nextToken(), JsonToken.START_OBJECT, "the acks answer");
            int ok = 0;
            int results = 0;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                if (!"results".equals(p.currentName())) {
                    p.nextToken();
                    p.skipChildren();
                    continue;
                }
                expect(p.nextToken(), JsonToken.START_ARRAY, "results");
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    expect(p.currentToken(), JsonToken.START_OBJECT, "a result");
                    String lease = null;
                    String error = null;
                    boolean accepted = false;
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String name = p.currentName();
                        p.nextToken();
                        switch (name) {
                            case "lease" -> lease = p.getText();
                            case "ok" -> accepted = p.currentToken() == JsonToken.VALUE_TRUE;
                            case "error" -> error = p.getText();
                            default -> p.skipChildren();
                        }
                    }
                    results++;
                    if (!accepted) {
                        throw new IllegalStateException("an accept was refused: lease " + lease + ", error " + error);
                    }
                    ok++;
                }
            }
            if (results != leases.size()) {
                throw new IllegalStateException("the acks answer has " + results + " results for " + leases.size()
                        + " acks");
            }
            return ok;
        } catch (IOException e) {
            throw new IllegalStateException("an acks answer that is not JSON: " + e.getMessage(), e);
        }
    }

    private static void expect(JsonToken got, JsonToken wanted, String what) {
        if (got != wanted) {
            throw new IllegalStateException(what + ": expected " + wanted + ", found " + got);
        }
    }
}
