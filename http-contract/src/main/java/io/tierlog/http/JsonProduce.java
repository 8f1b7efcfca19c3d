package io.tierlog.http;

import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.ProduceResult;
import io.tierlog.log.Names;

/**
 * A JSON produce body (docs/api.md, "Produce") from the wire to the log, the same way at every edge: the topic
 * name ({@code invalid-topic}), the body size ({@code request-too-large}), the JSON ({@code bad-request} naming the
 * field), then {@link IngestService#produce(String, io.tierlog.ingest.ProduceRequest)}. Nothing is appended unless
 * every check passes. Stateless and thread-safe.
 */
public final class JsonProduce {
    private static final ProduceRequestParser PARSER = new ProduceRequestParser();

    private JsonProduce() {
    }

    public static ProduceResult produce(IngestService ingest, String topic, byte[] body) {
        Names.requireValidTopic(topic);
        ingest.requireWithinRequestLimit(body.length);
        return ingest.produce(topic, PARSER.parse(body));
    }
}
