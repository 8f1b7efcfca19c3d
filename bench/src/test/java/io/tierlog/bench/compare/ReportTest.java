package io.tierlog.bench.compare;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ReportTest {

    @Test
    void recordBatchRowsStandBesideTheJsonRowsAgainstTheSameKafkaRuns() {
        Results results = new Results();
        results.add(new Results.Key("produce", "Kafka", Durability.ALWAYS, 8), Map.of("mbps", 100.0, "rps", 1000.0));
        results.add(new Results.Key("produce", "Tierlog", Durability.ALWAYS, 8), Map.of("mbps", 50.0, "rps", 500.0));
        results.add(new Results.Key("produce-batches", "Tierlog", Durability.ALWAYS, 8), Map.of("mbps", 80.0, "rps", 800.0));
        results.add(new Results.Key("half-peak", "Tierlog", Durability.ALWAYS, 8),
                Map.of("targetRps", 250.0, "rps", 250.0, "p50ms", 3.0, "p99ms", 9.0));
        results.add(new Results.Key("half-peak-batches", "Tierlog", Durability.ALWAYS, 8),
                Map.of("targetRps", 400.0, "rps", 399.0, "p50ms", 4.0, "p99ms", 12.0));
        results.add(new Results.Key(CompareCommand.COLD_REPLAY, "Tierlog", Durability.NEVER, 0), Map.of("mbps", 30.0));
        results.add(new Results.Key(CompareCommand.COLD_REPLAY_BATCHES, "Tierlog", Durability.NEVER, 0), Map.of("mbps", 60.0));
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("mode", "--quick");
        settings.put("records", 100_000L);
        settings.put("partitions", 8);
        settings.put("producers", List.of(8));

        String md = new Report(results, Map.of(), settings, "t").markdown();

        assertThat(md).contains("| fsync before ack | 8 | JSON | MB/s | 100 | 50 | 0.50x |",
                "| fsync before ack | 8 | record batches | MB/s | 100 | 80 | 0.80x |",
                "| Tierlog, JSON | 8 | 250 | 250 | 3 | 9 |",
                "| Tierlog, record batches | 8 | 400 | 399 | 4 | 12 |",
                "| cold replay from S3 after hot eviction, JSON | n/a (no tiered storage plugin in this setup) | 30 | n/a |",
                "| cold replay from S3 after hot eviction, record batches | n/a (no tiered storage plugin in this setup) | 60 | n/a |",
                "fsync before ack, 8 producers, Tierlog record batches) >= 1.0x Kafka | 0.80x | **no** |",
                "| Tierlog, record batches p99 produce latency, fsync always, at half of its peak <= 10 ms | 12 ms | **no** |");
    }
}
