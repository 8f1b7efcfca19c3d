package io.tierlog.bench.compare;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class TierlogProduceBodyTest {

    @Test
    void bodyIsApiJsonWhoseValuesAreTheSameBytesKafkaGets() throws Exception {
        Payload payload = new Payload(1024, 7);

        JsonNode body = new ObjectMapper().readTree(TierlogSystem.body(payload, 5, 3, 6));

        assertThat(body.get("encoding").asText()).isEqualTo("json");
        assertThat(body.get("records")).hasSize(3);
        for (int i = 0; i < 3; i++) {
            JsonNode value = body.get("records").get(i).get("value");
            // Each request goes to one partition, named on every record.
            assertThat(body.get("records").get(i).get("partition").asInt()).isEqualTo(6);
            // Tierlog stores a JSON value as its compact text: exactly the bytes Kafka is sent.
            assertThat(value.toString().getBytes(StandardCharsets.UTF_8)).isEqualTo(payload.bytes(5 + i));
            assertThat(payload.bytes(5 + i)).hasSize(1024);
        }
    }

    @Test
    void producersShareRecordsExactly() {
        ProduceSpec spec = new ProduceSpec(1_000_003, 8, 1000, 0, new Payload(16, 1));
        long sum = 0;
        for (int p = 0; p < 8; p++) {
            sum += spec.recordsFor(p);
        }
        assertThat(sum).isEqualTo(1_000_003);
    }
}
