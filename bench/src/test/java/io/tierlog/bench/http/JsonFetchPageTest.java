package io.tierlog.bench.http;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JsonFetchPageTest {
    private static ByteArrayInputStream json(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void countsRecordsAndStoredValueBytesAndCallsBackOnceAtTheFirstValue() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        JsonFetchPage page = JsonFetchPage.read(json("{\"topic\":\"t\",\"partition\":0,\"records\":["
                + "{\"offset\":7,\"timestamp\":1,\"key\":null,\"value\":\"abc\",\"headers\":{\"h\":\"x\"}},"
                + "{\"offset\":8,\"timestamp\":2,\"key\":\"k\",\"value\":\"\",\"headers\":{}}],"
                + "\"nextOffset\":9,\"highWatermark\":9,\"logStartOffset\":0}"), 7, calls::incrementAndGet);
        assertThat(page).isEqualTo(new JsonFetchPage(2, 5 + 2, 9));
        assertThat(calls).hasValue(1);
    }

    @Test
    void aGapOrAWrongNextOffsetIsAnError() {
        assertThatThrownBy(() -> JsonFetchPage.read(json("{\"records\":[{\"offset\":7,\"value\":\"a\"},"
                + "{\"offset\":9,\"value\":\"b\"}],\"nextOffset\":10}"), 7, null))
                .hasMessageContaining("offset 9 where 8 was expected");
        assertThatThrownBy(() -> JsonFetchPage.read(json("{\"records\":[{\"offset\":7,\"value\":\"a\"}],"
                + "\"nextOffset\":9}"), 7, null))
                .hasMessageContaining("nextOffset 9");
    }
}
