package io.tierlog.bench.share;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Utils;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * One Tierlog lease answer ({@code {"records": [{"lease", "partition", "offset", "deliveryCount", "timestamp", "key",
 * "value", "headers", ...}]}}, docs/api.md "Share groups") read in one streaming pass: each record's lease string,
 * partition and offset, and its value materialized as bytes (base64-decoded when the record says
 * {@code "valueEncoding": "base64"}, else the value's JSON text copied out of the answer, which is the value's stored
 * bytes), as a {@code KafkaShareConsumer} with a {@code ByteArrayDeserializer} copies each value out of its fetch
 * buffer. Keys and headers are skipped (the bench's records have none). No tree of the ~700 KB answer is built, and
 * no value is decoded into a string. Immutable.
 *
 * <p>{@code leases} are what the batch is acknowledged with, one ack entry each: a lease per record, or with the
 * leased-ranges answer ({@link #readRanges}) a range lease per run of records (ADR 0042).
 */
record LeasedBatch(List<String> leases, long[] partitions, long[] offsets, long valueBytes) {
    private static final JsonFactory FACTORY = new JsonFactory();

    /** The records leased. */
    int size() {
        return offsets.length;
    }

    boolean isEmpty() {
        return offsets.length == 0;
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
                    int valueStart = -1;
                    int valueEnd = -1;
                    boolean base64 = false;
                    JsonToken f = p.nextToken();
                    while (f == JsonToken.FIELD_NAME) {
                        String name = p.currentName();
                        JsonToken t = p.nextToken();
                        switch (name) {
                            case "lease" -> lease = p.getText();
                            case "partition" -> partition = p.getLongValue();
                            case "offset" -> offset = p.getLongValue();
                            case "value" -> {
                                if (t != JsonToken.VALUE_NULL) {
                                    // Not decoded (no getText): the parser skips it; its bytes are copied below.
                                    valueStart = (int) p.currentTokenLocation().getByteOffset();
                                    p.skipChildren();
                                }
                            }
                            case "valueEncoding" -> base64 = "base64".equals(p.getText());
                            default -> p.skipChildren(); // a no-op for scalars
                        }
                        f = p.nextToken();
                        if (valueStart >= 0 && valueEnd < 0) {
                            valueEnd = endBefore(answer, (int) p.currentTokenLocation().getByteOffset());
                        }
                    }
                    expect(f, JsonToken.END_OBJECT, "a record's end");
                    if (lease == null || partition < 0 || offset < 0) {
                        throw new IllegalStateException("a leased record without lease, partition or offset");
                    }
                    if (valueStart >= 0) {
                        // The value's bytes as stored: a JSON value is rendered as its stored text, a base64 one
                        // between quotes (no escapes in base64).
                        byte[] bytes = base64 ? Base64.getDecoder().decode(Arrays.copyOfRange(answer, valueStart + 1,
                                valueEnd - 1)) : Arrays.copyOfRange(answer, valueStart, valueEnd);
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

    /**
     * Reads a binary answer ({@code Accept: application/vnd.tierlog.leased-batches}, docs/api.md "Share groups"): the
     * header's leased offsets and lease strings per partition, then each partition's stored record batches, CRC-checked
     * and walked with kafka-clients as a {@code KafkaShareConsumer} walks a ShareFetch answer, each leased record's
     * value copied out (its {@code ByteArrayDeserializer}); records in the batches that were not leased are skipped.
     * An answer of another shape, or a leased offset missing from its batches, is an {@link IllegalStateException}.
     */
    static LeasedBatch readBatches(byte[] answer) {
        return readBinary(answer, false);
    }

    /**
     * Reads a leased-ranges answer ({@code Accept: application/vnd.tierlog.leased-ranges}, docs/api.md "Share
     * groups"): as {@link #readBatches}, but the header names per partition runs (first offset, record count, delivery
     * count, range lease) instead of one lease per record, so there is one lease string per run to read and ack.
     */
    static LeasedBatch readRanges(byte[] answer) {
        return readBinary(answer, true);
    }

    private static LeasedBatch readBinary(byte[] answer, boolean ranges) {
        try {
            ByteBuffer in = ByteBuffer.wrap(answer);
            int sections = in.getInt();
            int[] partitionOf = new int[sections];
            long[][] offsetsOf = new long[sections][];
            int[] batchBytes = new int[sections];
            List<String> leases = new ArrayList<>();
            int total = 0;
            for (int s = 0; s < sections; s++) {
                partitionOf[s] = in.getInt();
                int n = in.getInt();
                long[] wanted = new long[ranges ? 0 : n];
                int w = 0;
                for (int i = 0; i < n; i++) {
                    long first = in.getLong();
                    int count = ranges ? in.getInt() : 1;
                    in.getInt(); // delivery count
                    byte[] lease = new byte[in.getShort()];
                    in.get(lease);
                    leases.add(new String(lease, StandardCharsets.US_ASCII));
                    if (count < 1 || count > answer.length) {
                        throw new IllegalStateException("a run of " + count + " records");
                    }
                    if (w + count > wanted.length) {
                        wanted = Arrays.copyOf(wanted, Math.max(w + count, wanted.length * 2));
                    }
                    for (int c = 0; c < count; c++) {
                        wanted[w++] = first + c;
                    }
                }
                offsetsOf[s] = w == wanted.length ? wanted : Arrays.copyOf(wanted, w);
                total += w;
                batchBytes[s] = in.getInt();
            }
            long[] partitions = new long[total];
            long[] offsets = new long[total];
            long valueBytes = 0;
            int k = 0;
            int at = in.position();
            for (int s = 0; s < sections; s++) {
                long[] wanted = offsetsOf[s];
                int g = 0;
                MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(answer, at, batchBytes[s]).slice());
                for (RecordBatch batch : records.batches()) {
                    batch.ensureValid();
                    for (Record r : batch) {
                        if (g < wanted.length && r.offset() == wanted[g]) {
                            byte[] value = r.hasValue() ? Utils.toArray(r.value()) : null;
                            valueBytes += value == null ? 0 : value.length;
                            partitions[k] = partitionOf[s];
                            offsets[k] = wanted[g];
                            k++;
                            g++;
                        }
                    }
                }
                if (g < wanted.length) {
                    throw new IllegalStateException("leased offset " + wanted[g] + " of partition " + partitionOf[s]
                            + " is not in the answer's batches");
                }
                at += batchBytes[s];
            }
            if (at != answer.length) {
                throw new IllegalStateException("a leased-batches answer with " + (answer.length - at)
                        + " bytes beyond its batches");
            }
            return new LeasedBatch(List.copyOf(leases), partitions, offsets, valueBytes);
        } catch (BufferUnderflowException | IndexOutOfBoundsException | InvalidRecordException
                 | CorruptRecordException e) {
            throw new IllegalStateException("a leased-batches answer cut short or corrupt: " + e, e);
        }
    }

    /** {@code {"acks": [{"lease": ..., "type": "accept"}, ...]}}: every record of this batch, one entry per lease. */
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
     * as this batch has leases, every one {@code "ok": true}; returns the records so accepted, else an
     * {@link IllegalStateException} with the first refusal.
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
            if (results != leases.size() || ok != results) {
                throw new IllegalStateException("the acks answer has " + results + " results for " + leases.size()
                        + " acks");
            }
            return size();
        } catch (IOException e) {
            throw new IllegalStateException("an acks answer that is not JSON: " + e.getMessage(), e);
        }
    }

    /** The end of the value that precedes the token at {@code next}: back over whitespace and one ','. */
    private static int endBefore(byte[] answer, int next) {
        int i = next - 1;
        while (i >= 0 && isSpace(answer[i])) {
            i--;
        }
        if (i >= 0 && answer[i] == ',') {
            i--;
            while (i >= 0 && isSpace(answer[i])) {
                i--;
            }
        }
        return i + 1;
    }

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    private static void expect(JsonToken got, JsonToken wanted, String what) {
        if (got != wanted) {
            throw new IllegalStateException(what + ": expected " + wanted + ", found " + got);
        }
    }
}
