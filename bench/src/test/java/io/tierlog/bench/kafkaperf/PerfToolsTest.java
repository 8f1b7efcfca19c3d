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
    void fetchMetricsAreTheClientWideOnesOfPrintMetrics() {
        String out = """
                start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
                2026-12-01 18:20:01:000, 2026-12-01 18:20:11:000, 488.2812, 48.8281, 500000, 50000.0000, 3012, 6988, 69.8740, 71551.2307

                Metric Name                                                                                   Value
                consumer-fetch-manager-metrics:bytes-consumed-total:{client-id=perf-consumer-1, topic=peak-x}  : 536000000.000
                consumer-fetch-manager-metrics:fetch-latency-avg:{client-id=perf-consumer-1}                   : 29.412
                consumer-fetch-manager-metrics:fetch-size-avg:{client-id=perf-consumer-1}                      : 7280771.000
                consumer-fetch-manager-metrics:fetch-size-avg:{client-id=perf-consumer-1, topic=peak-x}        : 1.000
                consumer-fetch-manager-metrics:fetch-total:{client-id=perf-consumer-1}                         : 71.000
                consumer-fetch-manager-metrics:records-per-request-avg:{client-id=perf-consumer-1}             : 7042.254
                consumer-metrics:network-io-total:{client-id=perf-consumer-1}                                  : 1022.000
                """;
        PerfTools.ConsumerResult r = PerfTools.parseConsumer(out);
        assertThat(r.fetch().fetchTotal()).isEqualTo(71.0);
        assertThat(r.fetch().fetchSizeAvg()).isEqualTo(7280771.0);
        assertThat(r.fetch().fetchLatencyAvgMs()).isEqualTo(29.412);
        assertThat(r.fetch().recordsPerRequestAvg()).isEqualTo(7042.254);
        assertThat(r.fetch().line()).isEqualTo("fetch-total 71, fetch-size-avg 7280771 B, fetch-latency-avg 29.4 ms, "
                + "records-per-request-avg 7042");
    }

    @Test
    void noPrintedMetricsLeaveTheFetchFiguresUnknown() {
        assertThat(PerfTools.parseFetchMetrics("nothing here").fetchTotal()).isNaN();
    }

    @Test
    void serverCpuSplitsUserAndSystemTicks() {
        // A command name with a space and a ')' of its own; utime 1234 and stime 567 ticks (fields 14 and 15), the
        // waited-for children's 20 and 7 (fields 16 and 17).
        String stat = "4242 (java) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 20 7 20 0 40 0 100 0 0";
        ServerCpu cpu = ServerCpu.parse(stat);
        assertThat(cpu.userSeconds()).isEqualTo(12.34);
        assertThat(cpu.systemSeconds()).isEqualTo(5.67);
        assertThat(ServerCpu.parseChildren(stat)).isEqualTo(new ServerCpu(0.2, 0.07));
        ServerCpu per100k = new ServerCpu(14.34, 6.67).per100k(cpu, 500_000);
        assertThat(per100k.userSeconds()).isCloseTo(0.4, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(per100k.systemSeconds()).isCloseTo(0.2, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(per100k.totalSeconds()).isCloseTo(0.6, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void tableCarriesServerCpuAndFetchRows() {
        KafkaPerfCommand.Cell kafka = new KafkaPerfCommand.Cell();
        KafkaPerfCommand.Cell tierlog = new KafkaPerfCommand.Cell();
        kafka.consume.add(consumer(160_000, new PerfTools.FetchMetrics(63, 8_205_395, 33.2, 7937)));
        tierlog.consume.add(consumer(145_000, new PerfTools.FetchMetrics(71, 7_280_771, 29.4, 7042)));
        kafka.consumeSlot.add(0);
        tierlog.consumeSlot.add(0);
        // A slot whose Tierlog run failed: Kafka's result counts in its medians but pairs with nothing.
        kafka.consume.add(consumer(160_000, new PerfTools.FetchMetrics(63, 8_205_395, 33.2, 7937)));
        kafka.consumeSlot.add(1);
        kafka.consumeCpu.add(new ServerCpu(0.10, 0.20));
        tierlog.consumeCpu.add(new ServerCpu(0.30, 0.10));
        kafka.consumerCpu.add(new ServerCpu(0.5, 0.1));
        tierlog.consumerCpu.add(new ServerCpu(0.5, 0.1));
        kafka.consumeLayout.add(new BatchLayout(987, 500_000, 517_000_000));
        tierlog.consumeLayout.add(new BatchLayout(988, 500_000, 517_000_000));
        kafka.samePaced.add(PerfTools.parseProducer("250000 records sent, 40000.0 records/sec (39.06 MB/sec), 5.0 ms "
                + "avg latency, 90.00 ms max latency, 4 ms 50th, 20 ms 95th, 60 ms 99th, 80 ms 99.9th."));
        tierlog.samePaced.add(PerfTools.parseProducer("250000 records sent, 40000.0 records/sec (39.06 MB/sec), 4.0 "
                + "ms avg latency, 70.00 ms max latency, 3 ms 50th, 15 ms 95th, 30 ms 99th, 60 ms 99.9th."));
        // Peak runs 0 and 1 on both; Kafka's run 2 pairs with nothing.
        for (int run = 0; run < 3; run++) {
            kafka.peak.add(PerfTools.parseProducer("500000 records sent, 100000.0 records/sec (97.66 MB/sec), 5.0 ms "
                    + "avg latency, 90.00 ms max latency, 4 ms 50th, 20 ms 95th, 60 ms 99th, 80 ms 99.9th."));
            kafka.peakSlot.add(run);
        }
        for (double rate : new double[] {90_000, 120_000}) {
            tierlog.peak.add(PerfTools.parseProducer("500000 records sent, " + rate + " records/sec (97.66 MB/sec), "
                    + "5.0 ms avg latency, 90.00 ms max latency, 4 ms 50th, 20 ms 95th, 60 ms 99th, 80 ms 99.9th."));
        }
        tierlog.peakSlot.addAll(java.util.List.of(0, 1));
        kafka.samePacedRate.add(40_000L);
        tierlog.samePacedRate.add(40_000L);
        var cells = new java.util.EnumMap<io.tierlog.bench.compare.Durability,
                java.util.Map<KafkaPerfCommand.Server, KafkaPerfCommand.Cell>>(io.tierlog.bench.compare.Durability.class);
        cells.put(io.tierlog.bench.compare.Durability.ALWAYS,
                java.util.Map.of(KafkaPerfCommand.Server.KAFKA, kafka, KafkaPerfCommand.Server.TIERLOG, tierlog));
        String table = KafkaPerfCommand.table(cells);
        String d = io.tierlog.bench.compare.Durability.ALWAYS.label();
        assertThat(table)
                .contains("| " + d + " | consume records/s (ConsumerPerformance) | 160,000 | 145,000 | 0.91x |")
                .contains("| " + d + " | both paced at half of the slower peak (records/s) | 40,000 | 40,000 | |")
                .contains("| " + d + " | produce p99 ms, both at half of the slower peak | 60 | 30 | 2.00x |")
                .contains("| " + d + " | consume: server CPU s per 100k records, user | 0.100 | 0.300 | 0.33x |")
                .contains("| " + d + " | consume: server CPU s per 100k records, system | 0.200 | 0.100 | 2.00x |")
                .contains("| " + d + " | consume: server CPU s per 100k records, user + system | 0.300 | 0.400 | 0.75x |")
                .contains("| " + d + " | consume: ConsumerPerformance's own CPU s per 100k records (its JVM's start "
                        + "included) | 0.600 | 0.600 | 1.00x |")
                .contains("| " + d + " | consume: batches in the topic read (written the same way on both) "
                        + "| 987 | 988 |  |")
                .contains("| " + d + " | consume: fetch requests (consumer's fetch-total) | 63 | 71 |  |")
                .contains("| " + d + " | consume: bytes per fetch (fetch-size-avg) | 8,205,395 | 7,280,771 |  |")
                .contains("| " + d + " | consume: records per fetch (records-per-request-avg) | 7,937 | 7,042 |  |")
                .contains("| " + d + " | consume: fetch latency ms (fetch-latency-avg) | 33.2 | 29.4 | 1.13x |")
                .contains("| " + d + " | consume records/s, Tierlog/Kafka of runs paired in time: median (95% "
                        + "interval of the median) | | | 0.91x (1 pairs, too few for a 95% interval) |")
                .contains("| " + d + " | produce records/s, Tierlog/Kafka of runs paired in time: median (95% "
                        + "interval of the median) | | | 1.05x (2 pairs, too few for a 95% interval) |")
                .contains("| " + d + " | transactional produce records/s, Tierlog/Kafka of runs paired in time: "
                        + "median (95% interval of the median) | | | – |");
    }

    @Test
    void batchLayoutWalksTheHeadersOfEverySegmentOfTheTopic(@org.junit.jupiter.api.io.TempDir java.nio.file.Path logs)
            throws Exception {
        java.nio.file.Path p0 = java.nio.file.Files.createDirectories(logs.resolve("t-0"));
        java.nio.file.Path p1 = java.nio.file.Files.createDirectories(logs.resolve("t-1"));
        java.nio.file.Files.createDirectories(logs.resolve("other-0"));
        // Partition 0: batches of 3 and 2 records (100 and 80 bytes), then 10 zero bytes (a preallocated tail).
        java.nio.ByteBuffer seg = java.nio.ByteBuffer.allocate(190);
        seg.put(batch(0, 100, 2)).put(batch(3, 80, 1));
        java.nio.file.Files.write(p0.resolve("00000000000000000000.log"), seg.array());
        // Partition 1: one batch of 1 record in each of two segments; an index file beside them is not a segment.
        java.nio.file.Files.write(p1.resolve("00000000000000000000.log"), batch(0, 61, 0).array());
        java.nio.file.Files.write(p1.resolve("00000000000000000001.log"), batch(1, 61, 0).array());
        java.nio.file.Files.write(p1.resolve("00000000000000000000.index"), new byte[64]);
        assertThat(BatchLayout.of(logs, "t", 2)).isEqualTo(new BatchLayout(4, 7, 302));
        assertThat(BatchLayout.of(logs, "t", 3)).isEqualTo(new BatchLayout(4, 7, 302));
        assertThat(BatchLayout.of(logs, "absent", 2)).isEqualTo(BatchLayout.NONE);
    }

    /** A batch of {@code size} bytes whose header says so, with its last offset delta; the rest zeros. */
    private static java.nio.ByteBuffer batch(long base, int size, int lastOffsetDelta) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(size);
        b.putLong(0, base).putInt(8, size - 12).putInt(23, lastOffsetDelta);
        return b;
    }

    @Test
    void fullBatchesOfOneKibibyteRecordsFitTwoToAMebibyteFetch() {
        int perBatch = FullBatchWriter.recordsPerBatch(512 * 1024, 1024);
        assertThat(perBatch).isEqualTo(504);
        // The largest such batch still fits its batch.size, and two of them one partition's 1 MiB fetch.
        int largest = FullBatchWriter.BATCH_HEADER + perBatch * (1024 + FullBatchWriter.RECORD_OVERHEAD);
        assertThat(largest).isLessThanOrEqualTo(512 * 1024);
        assertThat(FullBatchWriter.recordsPerBatch(100, 1024)).isEqualTo(1);
        assertThat(FullBatchWriter.partitionOf(503, perBatch, 8)).isZero();
        assertThat(FullBatchWriter.partitionOf(504, perBatch, 8)).isEqualTo(1);
        assertThat(FullBatchWriter.partitionOf(8 * 504, perBatch, 8)).isZero();
    }

    private static PerfTools.ConsumerResult consumer(double recordsPerSec, PerfTools.FetchMetrics fetch) {
        return new PerfTools.ConsumerResult(500_000, recordsPerSec, recordsPerSec / 1024, recordsPerSec * 1.2,
                recordsPerSec / 1000, 400, "line", fetch);
    }

    @Test
    void missingSummaryFailsWithTheOutput() {
        assertThatThrownBy(() -> PerfTools.parseProducer("Exception in thread main"))
                .hasMessageContaining("Exception in thread main");
        assertThatThrownBy(() -> PerfTools.parseConsumer("nothing"))
                .hasMessageContaining("nothing");
    }
}
