package io.tierlog.service.api;

import io.tierlog.http.Encoding;
import io.tierlog.log.TopicPartition;
import io.tierlog.service.http.Utf8;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Renders records straight from stored batch bytes into a {@link JsonOut}, as api.md's fetch body
 * ({@code {"topic", "partition", "records", "nextOffset", "highWatermark", "logStartOffset"}}) or as SSE events
 * ({@code id:}, {@code event: record}, {@code data:}), with each record exactly as {@link RecordJson} writes it
 * (same fields, order, checks and encodings; its class comment has the rules). The difference is the way: no
 * {@code LogRecord} or byte array per record and no generator; a value is copied once, from the batch into the
 * output, checked there (whitespace trimmed, one valid UTF-8 JSON text) and base64-encoded instead only when it
 * is not one. Keys and header names and values are escaped as Jackson escapes them.
 *
 * <p>The limits are those of a record fetch ({@code PartitionReader#read}): at most {@code maxRecords}, and a record
 * that would take the records' {@code sizeInBytes} past {@code maxBytes} is left out unless it is the first. Batches
 * are offered with {@link #add} until it answers full or the caller has no more. Not thread-safe; one per answer.
 */
final class StoredJson {
    private static final byte[] OFFSET = ascii("{\"offset\":");
    private static final byte[] TIMESTAMP = ascii(",\"timestamp\":");
    private static final byte[] KEY = ascii(",\"key\":");
    private static final byte[] KEY_BASE64 = ascii(",\"keyEncoding\":\"base64\"");
    private static final byte[] VALUE = ascii(",\"value\":");
    private static final byte[] VALUE_BASE64 = ascii(",\"valueEncoding\":\"base64\"");
    private static final byte[] HEADERS = ascii(",\"headers\":{");
    private static final byte[] HEADERS_BASE64 = ascii(",\"headersEncoding\":\"base64\"");
    private static final byte[] NULL = ascii("null");
    private static final byte[] EVENT_ID = ascii("id: ");
    private static final byte[] EVENT_RECORD = ascii("\nevent: record\ndata: ");
    private static final byte[] DATA = ascii("data: ");

    private final JsonOut out;
    private final Encoding encoding;
    private final TopicPartition tp;
    private final boolean sse;
    private final int maxRecords;
    private final long maxBytes;
    private final StoredRecords records = new StoredRecords();
    /** Which records to render and what goes in front of their fields (a share-group lease), or null. */
    private final Splice splice;
    /** Whether the array already holds records (of other partitions) before this one's first. */
    private final boolean commaFirst;
    /** The record's own prefix for SSE: {@code {"topic":"t","partition":p,"offset":}. */
    private final byte[] ssePrefix;
    private byte[] scratch = new byte[256];
    private int count;
    private long bytes;
    private long lastOffset = -1;

    private StoredJson(JsonOut out, TopicPartition tp, Encoding encoding, boolean sse, int maxRecords, long maxBytes) {
        this(out, tp, encoding, sse, maxRecords, maxBytes, null, false);
    }

    private StoredJson(JsonOut out, TopicPartition tp, Encoding encoding, boolean sse, int maxRecords, long maxBytes,
                       Splice splice, boolean commaFirst) {
        this.splice = splice;
        this.commaFirst = commaFirst;
        this.out = out;
        this.tp = tp;
        this.encoding = encoding;
        this.sse = sse;
        this.maxRecords = maxRecords;
        this.maxBytes = maxBytes;
        JsonOut prefix = new JsonOut(64);
        prefix.write(ascii("{\"topic\":"));
        byte[] topic = tp.topic().getBytes(StandardCharsets.UTF_8);
        prefix.string(topic, 0, topic.length);
        prefix.write(ascii(",\"partition\":"));
        prefix.number(tp.partition());
        this.ssePrefix = prefix.toByteArray();
    }

    /** A fetch body: the head is written at once, {@link #finishBody} closes it. */
    static StoredJson body(JsonOut out, TopicPartition tp, Encoding encoding, int maxRecords, long maxBytes) {
        StoredJson r = new StoredJson(out, tp, encoding, false, maxRecords, maxBytes);
        out.write(r.ssePrefix);
        out.write(ascii(",\"records\":["));
        return r;
    }

    /** SSE events, one per record, back to back. */
    static StoredJson events(JsonOut out, TopicPartition tp, Encoding encoding, int maxRecords, long maxBytes) {
        return new StoredJson(out, tp, encoding, true, maxRecords, maxBytes);
    }

    /**
     * Chooses the records a {@link #spliced} rendering writes, and writes fields in front of each one's own fields
     * (share-group leases: {@code "lease"}, {@code "partition"}, {@code "deliveryCount"}).
     */
    interface Splice {
        /** Whether the record at {@code offset} is rendered; asked in ascending offset order. */
        boolean wants(long offset);

        /** Writes the fields that go in front of the chosen record's own, each followed by a comma. */
        void fields(long offset, JsonOut out);
    }

    /**
     * Records of one partition as elements of a JSON array the caller opened and closes: only those {@code splice}
     * wants, each with its fields in front, no limits. {@code commaFirst}: the array already has elements.
     */
    static StoredJson spliced(JsonOut out, TopicPartition tp, Encoding encoding, Splice splice, boolean commaFirst) {
        return new StoredJson(out, tp, encoding, false, Integer.MAX_VALUE, Long.MAX_VALUE, splice, commaFirst);
    }

    int count() {
        return count;
    }

    /** The offset of the last record rendered, or -1 if none was. */
    long lastOffset() {
        return lastOffset;
    }

    boolean full() {
        return count >= maxRecords || (count > 0 && bytes >= maxBytes);
    }

    /**
     * Renders the records of {@code batches} (position to limit; whole batches) with offsets {@code >= from}.
     *
     * @return true once the limits are reached (later batches are not wanted)
     */
    boolean add(ByteBuffer batches, long from) {
        StoredRecords r = records;
        r.reset(batches.duplicate());
        while (!full() && r.next()) {
            if (r.offset < from || (splice != null && !splice.wants(r.offset))) {
                continue;
            }
            long size = sizeInBytes(r);
            if (count > 0 && bytes + size > maxBytes) {
                bytes = maxBytes;     // full: this record and the rest are left for the next fetch
                return true;
            }
            record(r);
            count++;
            bytes += size;
            lastOffset = r.offset;
        }
        return full();
    }

    /** Closes a fetch body. */
    void finishBody(long nextOffset, long highWatermark, long logStartOffset) {
        out.write(ascii("],\"nextOffset\":"));
        out.number(nextOffset);
        out.write(ascii(",\"highWatermark\":"));
        out.number(highWatermark);
        finishExtent(logStartOffset);
    }

    /** As {@link #finishBody(long, long, long)}, for a read_committed fetch: with the last stable offset. */
    void finishBody(long nextOffset, long highWatermark, long lastStableOffset, long logStartOffset) {
        out.write(ascii("],\"nextOffset\":"));
        out.number(nextOffset);
        out.write(ascii(",\"highWatermark\":"));
        out.number(highWatermark);
        out.write(ascii(",\"lastStableOffset\":"));
        out.number(lastStableOffset);
        finishExtent(logStartOffset);
    }

    private void finishExtent(long logStartOffset) {
        out.write(ascii(",\"logStartOffset\":"));
        out.number(logStartOffset);
        out.write('}');
    }

    /** A record's share of {@code maxBytes}, as {@code LogRecord#sizeInBytes} counts it. */
    private long sizeInBytes(StoredRecords r) {
        long size = 16L + Math.max(r.keyLength, 0) + Math.max(r.valueLength, 0);
        for (int h = 0; h < r.headerCount; h++) {
            size += nameUtf8Length(r, h) + Math.max(r.headerValueLength[h], 0);
        }
        return size;
    }

    private void record(StoredRecords r) {
        JsonOut o = out;
        int start;
        if (sse) {
            o.write(EVENT_ID);
            o.number(r.offset);
            o.write(EVENT_RECORD);
            start = o.size();
            o.write(ssePrefix);
            o.write(',');
            o.write(OFFSET, 1, OFFSET.length);     // "offset": without its opening brace
        } else {
            if (count > 0 || commaFirst) {
                o.write(',');
            }
            start = o.size();
            if (splice != null) {
                o.write('{');
                splice.fields(r.offset, o);
                o.write(OFFSET, 1, OFFSET.length);
            } else {
                o.write(OFFSET);
            }
        }
        o.number(r.offset);
        o.write(TIMESTAMP);
        o.number(r.timestamp);
        o.write(KEY);
        boolean lineBreaks = false;
        if (encoding == Encoding.BASE64) {
            base64OrNull(r.keySource(), r.keyAt, r.keyLength);
            o.write(VALUE);
            base64OrNull(r.valueSource(), r.valueAt, r.valueLength);
        } else {
            if (r.keyLength < 0) {
                o.write(NULL);
            } else {
                byte[] key = load(r.keySource(), r.keyAt, r.keyLength);
                if (Utf8.isValid(key, 0, r.keyLength)) {
                    o.string(key, 0, r.keyLength);
                } else {
                    o.base64(key, 0, r.keyLength);
                    o.write(KEY_BASE64);
                }
            }
            o.write(VALUE);
            lineBreaks = jsonValue(r.valueSource(), r.valueAt, r.valueLength);
        }
        boolean headersAsText = encoding == Encoding.JSON && headerValuesAreUtf8(r);
        o.write(HEADERS);
        for (int h = 0; h < r.headerCount; h++) {
            if (h > 0) {
                o.write(',');
            }
            headerName(r, h);
            o.write(':');
            int n = r.headerValueLength[h];
            if (n < 0) {
                o.write(NULL);
            } else {
                byte[] v = load(r.headerSource(h), r.headerValueAt[h], n);
                if (headersAsText) {
                    o.string(v, 0, n);
                } else {
                    o.base64(v, 0, n);
                }
            }
        }
        o.write('}');
        if (encoding == Encoding.JSON && !headersAsText) {
            o.write(HEADERS_BASE64);
        }
        o.write('}');
        if (sse) {
            if (lineBreaks) {
                splitLines(start);
            }
            o.write('\n');
            o.write('\n');
        }
    }

    /**
     * The value of {@code encoding=json}: copied into the output, then checked there; a value that is not one valid
     * UTF-8 JSON text is replaced by its base64. Returns whether a value embedded as is holds CR or LF.
     */
    private boolean jsonValue(ByteBuffer src, int at, int length) {
        JsonOut o = out;
        if (length < 0) {
            o.write(NULL);
            return false;
        }
        int start = o.size();
        o.write(src, at, length);
        byte[] b = o.buf;
        int from = start;
        int to = start + length;
        while (from < to && isSpace(b[from])) {
            from++;
        }
        while (to > from && isSpace(b[to - 1])) {
            to--;
        }
        boolean plainString = RecordJson.isPlainAsciiJsonString(b, from, to);
        if (plainString || (from < to && Utf8.isValid(b, from, to) && RecordJson.isOneJsonValue(b, from, to))) {
            if (from > start) {
                System.arraycopy(b, from, b, start, to - from);
            }
            o.len = start + (to - from);
            return !plainString && containsLineBreak(b, start, o.len);
        }
        byte[] raw = Arrays.copyOfRange(b, start, start + length);
        o.len = start;
        o.base64(raw, 0, raw.length);
        o.write(VALUE_BASE64);
        return false;
    }

    private void base64OrNull(ByteBuffer src, int at, int length) {
        if (length < 0) {
            out.write(NULL);
        } else {
            out.base64(load(src, at, length), 0, length);
        }
    }

    private boolean headerValuesAreUtf8(StoredRecords r) {
        for (int h = 0; h < r.headerCount; h++) {
            int n = r.headerValueLength[h];
            if (n > 0 && !Utf8.isValid(load(r.headerSource(h), r.headerValueAt[h], n), 0, n)) {
                return false;
            }
        }
        return true;
    }

    /** A header name as Kafka reads it: a String decoded from UTF-8, invalid bytes replaced by U+FFFD. */
    private void headerName(StoredRecords r, int h) {
        int n = r.headerNameLength[h];
        byte[] name = load(r.headerSource(h), r.headerNameAt[h], Math.max(n, 0));
        if (Utf8.isValid(name, 0, Math.max(n, 0))) {
            out.string(name, 0, Math.max(n, 0));
        } else {
            byte[] decoded = new String(name, 0, n, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
            out.string(decoded, 0, decoded.length);
        }
    }

    private int nameUtf8Length(StoredRecords r, int h) {
        int n = Math.max(r.headerNameLength[h], 0);
        byte[] name = load(r.headerSource(h), r.headerNameAt[h], n);
        return Utf8.isValid(name, 0, n) ? n
                : new String(name, 0, n, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8).length;
    }

    /** {@code n} bytes of {@code src} from {@code at} in the scratch array (valid until the next load). */
    private byte[] load(ByteBuffer src, int at, int n) {
        if (scratch.length < n) {
            scratch = new byte[Math.max(n, scratch.length * 2)];
        }
        src.get(at, scratch, 0, n);
        return scratch;
    }

    /** Rewrites {@code out[from, len)} so that each CR, LF or CRLF becomes a line break plus {@code data: }. */
    private void splitLines(int from) {
        JsonOut o = out;
        byte[] event = Arrays.copyOfRange(o.buf, from, o.len);
        o.len = from;
        for (int i = 0; i < event.length; i++) {
            byte b = event[i];
            if (b == '\r' || b == '\n') {
                if (b == '\r' && i + 1 < event.length && event[i + 1] == '\n') {
                    i++;
                }
                o.write('\n');
                o.write(DATA);
            } else {
                o.write(b);
            }
        }
    }

    private static boolean containsLineBreak(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] == '\n' || b[i] == '\r') {
                return true;
            }
        }
        return false;
    }

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
