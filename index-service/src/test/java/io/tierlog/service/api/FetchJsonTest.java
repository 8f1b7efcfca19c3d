package io.tierlog.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.http.Encoding;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.service.read.FetchResult;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class FetchJsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TopicPartition TP = new TopicPartition("orders", 3);

    @Test
    void fetchBodyCarriesRecordsAndBounds() throws Exception {
        List<LogRecord> records = List.of(record(5, "{\"a\":1}"), record(6, "\"x\""));
        JsonNode body = JSON.readTree(FetchJson.render(TP, new FetchResult(records, 7, 9, 2), Encoding.JSON));
        assertThat(body.get("topic").asText()).isEqualTo("orders");
        assertThat(body.get("partition").asInt()).isEqualTo(3);
        assertThat(body.get("records")).hasSize(2);
        assertThat(body.get("records").get(0).get("value").get("a").asInt()).isEqualTo(1);
        assertThat(body.get("records").get(1).get("offset").asLong()).isEqualTo(6);
        assertThat(body.get("nextOffset").asLong()).isEqualTo(7);
        assertThat(body.get("highWatermark").asLong()).isEqualTo(9);
        assertThat(body.get("logStartOffset").asLong()).isEqualTo(2);
    }

    @Test
    void sseEventsParseBackToTheRecordsEvenWhenAValueSpansLines() throws Exception {
        List<LogRecord> records = List.of(record(10, "{\n  \"a\": [1,\r\n 2]\r}"), record(11, "42"), record(12, "{}"));
        String stream = new String(FetchJson.sseEvents(TP, records, Encoding.JSON), StandardCharsets.UTF_8);
        List<Event> events = parse(stream);
        assertThat(events).extracting(Event::id).containsExactly("10", "11", "12");
        assertThat(events).extracting(Event::type).containsOnly("record");
        JsonNode first = JSON.readTree(events.get(0).data());
        assertThat(first.get("topic").asText()).isEqualTo("orders");
        assertThat(first.get("partition").asInt()).isEqualTo(3);
        assertThat(first.get("offset").asLong()).isEqualTo(10);
        assertThat(first.get("value").get("a").get(1).asInt()).isEqualTo(2);
        assertThat(JSON.readTree(events.get(1).data()).get("value").asInt()).isEqualTo(42);
        assertThat(stream.split("\n\n", -1)).as("events end with a blank line").hasSize(4);
    }

    private record Event(String id, String type, String data) {
    }

    /** The HTML SSE parsing rules for the fields used here: lines end at CR, LF or CRLF; data lines join with LF. */
    private static List<Event> parse(String stream) {
        List<Event> events = new ArrayList<>();
        String id = null;
        String type = null;
        StringBuilder data = null;
        for (String line : stream.split("\r\n|\r|\n", -1)) {
            if (line.isEmpty()) {
                if (data != null) {
                    events.add(new Event(id, type, data.toString()));
                }
                id = null;
                type = null;
                data = null;
            } else if (line.startsWith("id: ")) {
                id = line.substring(4);
            } else if (line.startsWith("event: ")) {
                type = line.substring(7);
            } else if (line.startsWith("data: ")) {
                data = data == null ? new StringBuilder(line.substring(6)) : data.append('\n').append(line.substring(6));
            } else {
                throw new AssertionError("unexpected SSE line: " + line);
            }
        }
        return events;
    }

    private static LogRecord record(long offset, String value) {
        return new LogRecord(offset, 1000 + offset, null, value.getBytes(StandardCharsets.UTF_8), List.of());
    }
}
