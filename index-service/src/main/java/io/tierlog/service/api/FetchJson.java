package io.tierlog.service.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.tierlog.ingest.Encoding;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.service.read.FetchResult;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/** Renders a fetch answer: {@code {"topic", "partition", "records", "nextOffset", "highWatermark", "logStartOffset"}}. */
public final class FetchJson {
    private static final JsonFactory FACTORY = new JsonFactory();

    private FetchJson() {
    }

    public static byte[] render(TopicPartition tp, FetchResult result, Encoding encoding) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256 + result.records().size() * 64);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("topic", tp.topic());
            g.writeNumberField("partition", tp.partition());
            g.writeArrayFieldStart("records");
            for (LogRecord r : result.records()) {
                RecordJson.write(g, null, 0, r, encoding);
            }
            g.writeEndArray();
            g.writeNumberField("nextOffset", result.nextOffset());
            g.writeNumberField("highWatermark", result.highWatermark());
            g.writeNumberField("logStartOffset", result.logStartOffset());
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** One record as the SSE {@code data:} line carries it: the fetch record JSON with topic and partition. */
    public static byte[] record(TopicPartition tp, LogRecord r, Encoding encoding) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            RecordJson.write(g, tp.topic(), tp.partition(), r, encoding);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
