package io.tierlog.http;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ProblemJsonTest {
    @Test
    void rendersStandardMembersFirstThenExtrasInOrder() {
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("logStartOffset", 3L);
        extra.put("highWatermark", 9L);
        byte[] json = ProblemJson.render(new TierlogException(ErrorType.OFFSET_OUT_OF_RANGE, "offset 12 is beyond 9", extra));

        assertThat(new String(json, StandardCharsets.UTF_8)).isEqualTo("{\"type\":\"offset-out-of-range\","
                + "\"title\":\"Offset out of range\",\"status\":416,\"detail\":\"offset 12 is beyond 9\","
                + "\"logStartOffset\":3,\"highWatermark\":9}");
    }

    @Test
    void extrasCannotOverrideStandardMembers() {
        byte[] json = ProblemJson.render(ErrorType.BAD_REQUEST, "records must be an array",
                Map.of("status", 200, "field", "records"));

        assertThat(new String(json, StandardCharsets.UTF_8)).isEqualTo("{\"type\":\"bad-request\","
                + "\"title\":\"Bad request\",\"status\":400,\"detail\":\"records must be an array\",\"field\":\"records\"}");
    }
}
