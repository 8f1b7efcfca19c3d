package io.tierlog.bench.cold;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SseParserTest {
    private final List<String> events = new ArrayList<>();
    private final SseParser parser = new SseParser((id, event, data, length) ->
            events.add(id + "|" + event + "|" + new String(data, 0, length, StandardCharsets.UTF_8)));

    private void feed(String text, int pieceSize) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i += pieceSize) {
            parser.feed(bytes, i, Math.min(pieceSize, bytes.length - i));
        }
    }

    @Test
    void parsesTheServiceStreamInAnyPieces() {
        String stream = ": tierlog stream t-0 from offset 0\n\n"
                + "id: 0\nevent: record\ndata: {\"offset\":0,\"value\":\"a\"}\n\n"
                + ":\n\n"
                + "id: 1\nevent: record\ndata: {\"offset\":1,\"value\":\"bc\"}\n\n";
        for (int piece : new int[] {1, 2, 3, 7, stream.length()}) {
            events.clear();
            feed(stream, piece);
            assertThat(events).as("pieces of %d bytes", piece).containsExactly(
                    "0|record|{\"offset\":0,\"value\":\"a\"}", "1|record|{\"offset\":1,\"value\":\"bc\"}");
        }
    }

    @Test
    void followsTheSpecOnLineEndsDataLinesIdsAndIncompleteEvents() {
        feed("id: 7\r\nevent: record\r\ndata: x\r\ndata:y\r\n\r\n"   // CRLF, two data lines, no space after colon
                + "data: z\r\r"                                      // CR only; id carries over, event resets
                + "event: ignored-no-data\n\n"                       // no data: not dispatched
                + "id: 9\nevent: record\ndata: pending", 3);          // no blank line yet: not dispatched

        assertThat(events).containsExactly("7|record|x\ny", "7|message|z");
    }

    @Test
    void findsTheJsonStringValueLengthQuotesIncluded() {
        byte[] json = "{\"offset\":3,\"key\":null,\"value\":\"ab\\\"c\",\"headers\":[]}".getBytes(StandardCharsets.UTF_8);
        assertThat(RecordValues.jsonStringValueLength(json, json.length)).isEqualTo(7);
        byte[] object = "{\"value\":{\"a\":1}}".getBytes(StandardCharsets.UTF_8);
        assertThat(RecordValues.jsonStringValueLength(object, object.length)).isEqualTo(-1);
    }
}
