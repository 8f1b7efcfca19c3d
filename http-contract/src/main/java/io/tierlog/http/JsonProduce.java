package io.tierlog.http;

import io.tierlog.ingest.BatchProduceResult;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.ProduceResult;
import io.tierlog.log.Names;
import io.tierlog.log.topic.TopicMetadata;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;

/**
 * A JSON produce body (docs/api.md, "Produce") from the wire to the log, the same way at every edge: the topic
 * name ({@code invalid-topic}), the body size ({@code request-too-large}), the JSON ({@code bad-request} naming the
 * field), then the append. The body is parsed in one pass into its record batches ({@link ProduceBodyEncoder},
 * then {@link IngestService#produceEncoded}); a body that encoder declines, every invalid one among them, goes
 * through {@link ProduceRequestParser} and {@link IngestService#produce(String, io.tierlog.ingest.ProduceRequest)},
 * which answer it exactly as they always have. Nothing is appended unless
 * every check passes; and the answer to every produce, JSON or record batches: docs/api.md's
 * {@code {"offsets":[{"partition":P,"offset":O},...],"duplicate":false}}. Stateless and thread-safe.
 */
public final class JsonProduce {
    private static final ProduceRequestParser PARSER = new ProduceRequestParser();

    private JsonProduce() {
    }

    public static ProduceResult produce(IngestService ingest, String topic, byte[] body) {
        return produce(ingest, topic, body, body.length);
    }

    /**
     * {@link #produce(IngestService, String, byte[])} of the body {@code body[0, length)}: the array may be longer
     * (pooled memory the body was read into); nothing after {@code length} is read, and the array is not kept.
     */
    public static ProduceResult produce(IngestService ingest, String topic, byte[] body, int length) {
        return produce(ingest, topic, body, length, () -> { });
    }

    /**
     * {@link #produce(IngestService, String, byte[], int)}, calling {@code bodyRead} as soon as the body is no longer
     * read: after the one-pass encoding, before the append (whose lock, write and fsync wait are most of a request's
     * time under load), so a pooled body goes back for the next request while this one waits. On the reference path
     * (declined bodies, errors) it is not called; the caller frees the body after this returns, as before.
     */
    public static ProduceResult produce(IngestService ingest, String topic, byte[] body, int length,
                                        Runnable bodyRead) {
        Names.requireValidTopic(topic);
        ingest.requireWithinRequestLimit(length);
        Optional<TopicMetadata> meta = ingest.topics().find(topic);
        if (meta.isPresent()) {
            TopicMetadata t = meta.get();
            // One pass from the body into the batches (docs/adr/0027-one-pass-json-produce.md) ...
            try (ProduceBodyEncoder.Encoded encoded = ProduceBodyEncoder.encode(body, length, t, ingest.nowMillis(),
                    producer -> ingest.unkeyedPartition(producer, t.partitions()))) {
                if (encoded != null) {
                    bodyRead.run();   // the values were copied into the batches
                    return ingest.produceEncoded(t, encoded.request());
                }
            }
        }
        // ... or, for every body it declines (each invalid one among them) and an unknown topic, the reference
        // parser and path, so that every answer and error is exactly as it was.
        return ingest.produce(topic, PARSER.parse(length == body.length ? body : Arrays.copyOf(body, length)));
    }

    /** The produce response for a JSON request. */
    public static byte[] answer(ProduceResult result) {
        int records = result.recordCount();
        long size = OFFSETS_HEAD.length + DUPLICATE_HEAD.length + (result.duplicate() ? TRUE_TAIL : FALSE_TAIL).length
                + Math.max(records - 1, 0);
        for (int i = 0; i < records; i++) {
            size += PARTITION_HEAD.length + digits(result.partitionAt(i)) + OFFSET_HEAD.length
                    + digits(result.offsetAt(i)) + 1;
        }
        // Sized exactly, so the array is the answer: no second, trimmed copy of some 30 KB per request.
        Ascii out = new Ascii((int) Math.min(size, Integer.MAX_VALUE - 8));
        out.append(OFFSETS_HEAD);
        for (int i = 0; i < records; i++) {
            if (i > 0) {
                out.append(',');
            }
            out.append(PARTITION_HEAD).number(result.partitionAt(i)).append(OFFSET_HEAD).number(result.offsetAt(i))
                    .append('}');
        }
        return out.append(DUPLICATE_HEAD).append(result.duplicate() ? TRUE_TAIL : FALSE_TAIL).bytes();
    }

    /**
     * The produce response for a record-batch request, byte for byte what {@link #answer(ProduceResult)} renders
     * for {@link BatchProduceResult#toProduceResult()}: one entry per record (about 30 bytes each; the offsets are
     * dense, so a client may read {@code offsets[0]} and the count). Written without a list of entries.
     */
    public static byte[] answer(BatchProduceResult result) {
        Ascii entryHead = new Ascii(32).append(PARTITION_HEAD).number(result.partition()).append(OFFSET_HEAD);
        long size = OFFSETS_HEAD.length + DUPLICATE_HEAD.length + (result.duplicate() ? TRUE_TAIL : FALSE_TAIL).length
                + Math.max(result.recordCount() - 1, 0);
        for (int i = 0; i < result.recordCount(); i++) {
            size += entryHead.length + digits(result.baseOffset() + i) + 1;
        }
        Ascii out = new Ascii((int) Math.min(size, Integer.MAX_VALUE - 8));
        out.append(OFFSETS_HEAD);
        for (int i = 0; i < result.recordCount(); i++) {
            if (i > 0) {
                out.append(',');
            }
            out.append(entryHead.buf, entryHead.length).number(result.baseOffset() + i).append('}');
        }
        return out.append(DUPLICATE_HEAD).append(result.duplicate() ? TRUE_TAIL : FALSE_TAIL).bytes();
    }

    private static final byte[] OFFSETS_HEAD = ascii("{\"offsets\":[");
    private static final byte[] PARTITION_HEAD = ascii("{\"partition\":");
    private static final byte[] OFFSET_HEAD = ascii(",\"offset\":");
    private static final byte[] DUPLICATE_HEAD = ascii("],\"duplicate\":");
    private static final byte[] TRUE_TAIL = ascii("true}");
    private static final byte[] FALSE_TAIL = ascii("false}");

    /**
     * The length of {@code v} in decimal, as {@link Ascii#number} writes it. By comparisons rather than divisions: it
     * runs for every number of an answer, before the number is written.
     */
    static int digits(long v) {
        if (v == Long.MIN_VALUE) {
            return 20;
        }
        long u = Math.abs(v);
        int n = 1;
        for (long bound = 10; n < 19 && u >= bound; bound *= 10) {
            n++;
        }
        return v < 0 ? n + 1 : n;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The answer's bytes written straight into one array: a thousand-record answer went through a StringBuilder,
     * a String and its encoding, three copies of about 30 KB per request.
     */
    private static final class Ascii {
        private byte[] buf;
        private int length;

        Ascii(int capacity) {
            buf = new byte[capacity];
        }

        private void ensure(int more) {
            if (length + more > buf.length) {
                buf = Arrays.copyOf(buf, Math.max(buf.length * 2, length + more));
            }
        }

        Ascii append(char c) {
            ensure(1);
            buf[length++] = (byte) c;
            return this;
        }

        Ascii append(byte[] b) {
            return append(b, b.length);
        }

        Ascii append(byte[] b, int n) {
            ensure(n);
            System.arraycopy(b, 0, buf, length, n);
            length += n;
            return this;
        }

        /** A long in decimal, as {@code Long.toString}; grows the array by exactly its digits. */
        Ascii number(long v) {
            if (v == Long.MIN_VALUE) {
                return append(ascii(Long.toString(v)));
            }
            int n = digits(v);
            ensure(n);
            int end = length + n;
            long u = Math.abs(v);
            int i = end;
            // Offsets and partitions mostly fit an int, whose division by ten compiles to a multiply and shift.
            while (u > Integer.MAX_VALUE) {
                long q = u / 10;
                buf[--i] = (byte) ('0' + (u - q * 10));
                u = q;
            }
            int x = (int) u;
            do {
                int q = x / 10;
                buf[--i] = (byte) ('0' + (x - q * 10));
                x = q;
            } while (x != 0);
            if (v < 0) {
                buf[--i] = '-';
            }
            length = end;
            return this;
        }

        byte[] bytes() {
            return length == buf.length ? buf : Arrays.copyOf(buf, length);
        }
    }
}
