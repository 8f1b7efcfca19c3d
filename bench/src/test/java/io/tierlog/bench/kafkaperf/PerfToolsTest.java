package io.tierlog.bench.kafkaperf;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PerfToolsTest {

    @Test
    void producerSummaryIsTheLastFullLine() {
        String out = """
                [main] WARN something
                120101 records sent, 24020.2 records/sec (23.46 MB/sec), 801.4 ms avg latency, 1500.0 ms max latency.
                500000 records sent, 41152.263374 records/sec (40.19 MB/sec), 611.82 ms avg latency, 1702.00 ms max latency, 540 ms 50th, 1300 ms 95th, 1600 ms 99th, 1690 ms 99.9th.
                """;
        PerfTools.ProducerResult r = PerfTools.parseProducer(out);
        assertThat(r.records()).isEqualTo(500000);
        assertThat(r.recordsPerSec()).isEqualTo(41152.263374);
        assertThat(r.mibPerSec()).isEqualTo(40.19);
        assertThat(r.p50Ms()).isEqualTo(540);
        assertThat(r.p99Ms()).isEqualTo(1600);
        assertThat(r.p999Ms()).isEqualTo(1690);
    }

    @Test
    void consumerSummaryByHeaderNames() {
        String out = """
                [main] INFO org.apache.kafka.tools.ConsumerPerformance - Starting consumer...
                start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
                2026-12-01 18:20:01:000, 2026-12-01 18:20:11:000, 488.2812, 48.8281, 500000, 50000.0000, 3012, 6988, 69.8740, 71551.2307
                """;
        PerfTools.ConsumerResult r = PerfTools.parseConsumer(out);
        assertThat(r.records()).isEqualTo(500000);
        assertThat(r.recordsPerSec()).isEqualTo(50000.0);
        assertThat(r.mibPerSec()).isEqualTo(48.8281);
        assertThat(r.rebalanceMs()).isEqualTo(3012);
        assertThat(r.fetchRecordsPerSec()).isEqualTo(71551.2307);
    }

    @Test
    void missingSummaryFailsWithTheOutput() {
        assertThatThrownBy(() -> PerfTools.parseProducer("Exception in thread main"))
                .hasMessageContaining("Exception in thread main");
        assertThatThrownBy(() -> PerfTools.parseConsumer("nothing"))
                .hasMessageContaining("nothing");
    }
}
