package io.tierlog.bench.kafkaperf;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** kafka-fetch and kafka-perf parse the shared option mixins as they parsed their own options before. */
class KafkaCommandOptionsTest {

    @Test
    void kafkaFetchTakesAppAndKafkaLibsThroughTheMixins() {
        KafkaFetchCommand fetch = new KafkaFetchCommand();
        new CommandLine(fetch).parseArgs("--app", "x/quarkus-app", "--kafka-libs", "y/libs", "--work-dir", "w",
                "--runs", "7", "--consumer-runs", "4");
        assertThat(fetch.app.path()).isEqualTo(Path.of("x/quarkus-app"));
        assertThat(fetch.kafkaLibs.path()).isEqualTo(Path.of("y/libs"));
        assertThat(fetch.work).isEqualTo(Path.of("w"));
        assertThat(fetch.runs).isEqualTo(7);
        assertThat(fetch.consumerRuns).isEqualTo(4);
    }

    @Test
    void kafkaFetchDefaults() {
        KafkaFetchCommand fetch = new KafkaFetchCommand();
        new CommandLine(fetch).parseArgs();
        assertThat(fetch.app.path()).isEqualTo(Path.of("index-service/target/quarkus-app"));
        assertThat(fetch.kafkaLibs.path()).isEqualTo(Path.of("bench/target/kafka-libs"));
        assertThat(fetch.work).isEqualTo(Path.of("bench/target/kafka-fetch"));
        assertThat(fetch.runs).isEqualTo(5);
        assertThat(fetch.consumerRuns).isEqualTo(15);
    }

    @Test
    void kafkaPerfTakesNoDocsConsumeRunsAndTheMixinsOptions() {
        KafkaPerfCommand perf = new KafkaPerfCommand();
        new CommandLine(perf).parseArgs("--no-docs", "--app", "x/quarkus-app", "--consume-runs", "5");
        assertThat(perf.docs.updateDocs()).isFalse();
        assertThat(perf.consumeRuns).isEqualTo(5);
        assertThat(perf.app.path()).isEqualTo(Path.of("x/quarkus-app"));
        assertThat(perf.work).isEqualTo(Path.of("bench/target/kafka-perf"));

        KafkaPerfCommand defaults = new KafkaPerfCommand();
        new CommandLine(defaults).parseArgs();
        assertThat(defaults.docs.updateDocs()).isTrue();
        assertThat(defaults.kafkaLibs.path()).isEqualTo(Path.of("bench/target/kafka-libs"));
        assertThat(defaults.runs).isEqualTo(3);
        assertThat(defaults.consumeRuns).isEqualTo(3);
    }
}
