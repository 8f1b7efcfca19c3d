package io.tierlog.service.telemetry;

import io.tierlog.access.Secrets;
import io.tierlog.log.TierlogException;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Client-metrics subscriptions: Kafka's checks of their configs, and their store on the volume instances share. */
class ClientMetricsSubscriptionsTest {
    @TempDir
    Path dir;

    ClientMetricsSubscriptions store() {
        return new ClientMetricsSubscriptions(dir, new ManualClock(1_000), new Secrets(new SecureRandom()));
    }

    @Test
    void configsTakeKafkasDefaultsAndMatchEveryPattern() {
        ClientMetricsSubscription none = ClientMetricsSubscription.of("s", Map.of());
        assertThat(none.metrics()).isEmpty();
        assertThat(none.intervalMs()).isEqualTo(300_000);
        assertThat(none.matches(Map.of())).as("no pattern: every client").isTrue();

        ClientMetricsSubscription s = ClientMetricsSubscription.of("s", Map.of("metrics",
                "org.apache.kafka.producer., org.apache.kafka.consumer.", "interval.ms", "1000",
                "match", "client_software_name=apache-kafka-java,client_id=app-.*"));
        assertThat(s.metrics()).containsExactly("org.apache.kafka.producer.", "org.apache.kafka.consumer.");
        assertThat(s.intervalMs()).isEqualTo(1000);
        assertThat(s.matches(Map.of("client_software_name", "apache-kafka-java", "client_id", "app-1"))).isTrue();
        assertThat(s.matches(Map.of("client_software_name", "apache-kafka-java", "client_id", "other"))).isFalse();
        assertThat(s.matches(Map.of("client_id", "app-1"))).as("a selector the client lacks").isFalse();
    }

    @Test
    void refusesWhatKafkaRefusesNamingTheKey() {
        assertThatThrownBy(() -> ClientMetricsSubscription.of("s", Map.of("interval.ms", "99")))
                .isInstanceOf(TierlogException.class).hasMessageContaining("100 to 3600000")
                .satisfies(e -> assertThat(((TierlogException) e).extra()).containsEntry("key", "interval.ms"));
        assertThatThrownBy(() -> ClientMetricsSubscription.of("s", Map.of("interval.ms", "3600001")))
                .isInstanceOf(TierlogException.class);
        assertThatThrownBy(() -> ClientMetricsSubscription.of("s", Map.of("interval.ms", "soon")))
                .isInstanceOf(TierlogException.class).hasMessageContaining("whole number");
        assertThatThrownBy(() -> ClientMetricsSubscription.of("s", Map.of("match", "client_rack=a")))
                .isInstanceOf(TierlogException.class).hasMessageContaining("selector");
        assertThatThrownBy(() -> ClientMetricsSubscription.of("s", Map.of("match", "client_id")))
                .isInstanceOf(TierlogException.class);
        assertThatThrownBy(() -> ClientMetricsSubscription.of("s", Map.of("match", "client_id=(")))
                .isInstanceOf(TierlogException.class).hasMessageContaining("regular expression");
        assertThatThrownBy(() -> ClientMetricsSubscription.of("s", Map.of("metric", "x")))
                .isInstanceOf(TierlogException.class).hasMessageContaining("unknown client metrics config");
        assertThatThrownBy(() -> ClientMetricsSubscription.of(" ", Map.of())).isInstanceOf(TierlogException.class);
    }

    @Test
    void storedDurablyAndSeenByAnotherInstanceAtItsRefresh() {
        ClientMetricsSubscriptions a = store();
        ClientMetricsSubscriptions b = store();
        a.put(ClientMetricsSubscription.of("producers", Map.of("metrics", "org.apache.kafka.producer.")));
        assertThat(b.all()).isEmpty();
        b.refresh();
        assertThat(b.get("producers")).get().extracting(ClientMetricsSubscription::metrics)
                .isEqualTo(java.util.List.of("org.apache.kafka.producer."));
        a.put(ClientMetricsSubscription.of("producers", Map.of("interval.ms", "500")));
        b.refresh();
        assertThat(b.get("producers").orElseThrow().intervalMs()).as("replaced whole").isEqualTo(500);
        assertThat(b.get("producers").orElseThrow().metrics()).isEmpty();
        assertThat(a.remove("producers")).isTrue();
        b.refresh();
        assertThat(b.all()).isEmpty();
        assertThat(store().all()).as("read afresh from the volume").isEmpty();
    }
}
