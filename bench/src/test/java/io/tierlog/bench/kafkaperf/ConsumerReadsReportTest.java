package io.tierlog.bench.kafkaperf;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ConsumerReadsReportTest {

    @Test
    void eachPairHasItsRatioAndTheMediansComeLast() {
        // 500,000 records in 1.0 s = 500,000/s; in 0.8 s = 625,000/s.
        List<ConsumerReadLoop.Result> kafka = List.of(read(1_000), read(1_000), read(500));
        List<ConsumerReadLoop.Result> tierlog = List.of(read(800), read(1_250), read(500));

        String table = KafkaFetchCommand.consumerReads(kafka, tierlog);

        assertThat(table).contains("3 alternating reads per server")
                .contains("| 0 | 500,000 | 625,000 | 1.25x |")
                .contains("| 1 | 500,000 | 400,000 | 0.80x |")
                .contains("| 2 | 1,000,000 | 1,000,000 | 1.00x |")
                .contains("Median records/s: Kafka 500,000, Tierlog 625,000 (Tierlog/Kafka 1.25x); "
                        + "median of the paired ratios 1.00x.");
    }

    private static ConsumerReadLoop.Result read(long millis) {
        return new ConsumerReadLoop.Result(500_000, 500_000L * 1024, millis * 1_000_000L);
    }
}
