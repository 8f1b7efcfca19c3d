package io.tierlog.http;

import io.tierlog.ingest.BatchProduceResult;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.PartitionOffset;
import io.tierlog.ingest.ProduceResult;
import io.tierlog.log.Names;
import io.tierlog.log.topic.TopicMetadata;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
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
        Names.requireValidTopic(topic);
        ingest.requireWithinRequestLimit(length);
        Optional<TopicMetadata> meta = ingest.topics().find(topic);
        if (meta.isPresent()) {
            TopicMetadata t = meta.get();
            // One pass from the body into the batches (docs/adr/0027-one-pass-json-produce.md) ...
            try (ProduceBodyEncoder.Encoded encoded = ProduceBodyEncoder.encode(body, length, t, ingest.nowMillis(),
                    producer -> ingest.unkeyedPartition(producer, t.partitions()))) {
                if (encoded != null) {
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
        List<PartitionOffset> offsets = result.offsets();
        Ascii out = new Ascii(40 + offsets.size() * 48);
        out.append(OFFSETS_HEAD);
        for (int i = 0; i < offsets.size(); i++) {
            PartitionOffset o = offsets.get(i);
            if (i > 0) {
                out.append(',');
            }
            out.append(PARTITION_HEAD).number(o.partition()).append(OFFSET_HEAD).number(o.offset()).append('}');
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
        Ascii out = new Ascii(40 + result.recordCount() * (entryHead.length + 22));
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

        /** A long in decimal, as {@code Long.toString}. */
        Ascii number(long v) {
            if (v == Long.MIN_VALUE) {
                return append(ascii(Long.toString(v)));
            }
            ensure(20);
            if (v < 0) {
                buf[length++] = '-';
                v = -v;
            }
            int digits = 1;
            for (long t = v; t >= 10; t /= 10) {
                digits++;
            }
            for (int i = length + digits - 1; i >= length; i--) {
                buf[i] = (byte) ('0' + v % 10);
                v /= 10;
            }
            length += digits;
            return this;
        }

        byte[] bytes() {
            return length == buf.length ? buf : Arrays.copyOf(buf, length);
        }
    }
}
