package io.tierlog.http;

import io.tierlog.ingest.BatchProduceResult;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.PartitionOffset;
import io.tierlog.ingest.ProduceResult;
import io.tierlog.log.Names;
import io.tierlog.log.topic.TopicMetadata;

import java.nio.charset.StandardCharsets;
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
        Names.requireValidTopic(topic);
        ingest.requireWithinRequestLimit(body.length);
        Optional<TopicMetadata> meta = ingest.topics().find(topic);
        if (meta.isPresent()) {
            TopicMetadata t = meta.get();
            // One pass from the body into the batches (docs/adr/0027-one-pass-json-produce.md) ...
            try (ProduceBodyEncoder.Encoded encoded = ProduceBodyEncoder.encode(body, t, ingest.nowMillis(),
                    producer -> ingest.unkeyedPartition(producer, t.partitions()))) {
                if (encoded != null) {
                    return ingest.produceEncoded(t, encoded.request());
                }
            }
        }
        // ... or, for every body it declines (each invalid one among them) and an unknown topic, the reference
        // parser and path, so that every answer and error is exactly as it was.
        return ingest.produce(topic, PARSER.parse(body));
    }

    /** The produce response for a JSON request. */
    public static byte[] answer(ProduceResult result) {
        StringBuilder out = new StringBuilder(40 + result.offsets().size() * 32);
        out.append("{\"offsets\":[");
        boolean first = true;
        for (PartitionOffset o : result.offsets()) {
            out.append(first ? "" : ",").append("{\"partition\":").append(o.partition()).append(",\"offset\":")
                    .append(o.offset()).append('}');
            first = false;
        }
        out.append("],\"duplicate\":").append(result.duplicate()).append('}');
        return out.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The produce response for a record-batch request, byte for byte what {@link #answer(ProduceResult)} renders
     * for {@link BatchProduceResult#toProduceResult()}: one entry per record (about 30 bytes each; the offsets are
     * dense, so a client may read {@code offsets[0]} and the count). Written without a list of entries.
     */
    public static byte[] answer(BatchProduceResult result) {
        String entryHead = "{\"partition\":" + result.partition() + ",\"offset\":";
        StringBuilder out = new StringBuilder(40 + result.recordCount() * (entryHead.length() + 22) + 24);
        out.append("{\"offsets\":[");
        for (int i = 0; i < result.recordCount(); i++) {
            if (i > 0) {
                out.append(',');
            }
            out.append(entryHead).append(result.baseOffset() + i).append('}');
        }
        out.append("],\"duplicate\":").append(result.duplicate()).append('}');
        return out.toString().getBytes(StandardCharsets.US_ASCII);
    }
}
