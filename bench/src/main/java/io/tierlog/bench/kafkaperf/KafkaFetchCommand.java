package io.tierlog.bench.kafkaperf;

import io.tierlog.bench.compare.BenchRun;
import io.tierlog.bench.compare.Durability;
import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.JitWarmup;
import io.tierlog.bench.compare.KafkaLibsOption;
import io.tierlog.bench.compare.LoadSampler;
import io.tierlog.bench.compare.MachineInfo;
import io.tierlog.bench.compare.PackagedServiceOption;
import io.tierlog.bench.compare.Ports;
import io.tierlog.bench.compare.TierlogService;
import io.tierlog.bench.compare.Workspace;
import io.tierlog.bench.kafka.KafkaBroker;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code tierlog-bench kafka-fetch}: the server's share of a Kafka fetch, side by side: a Kafka 4.4.0 broker and the
 * index-service's Kafka listener (page cache, {@code tierlog.fsync=never}) each hold the same topic written in the
 * same batches ({@link FullBatchWriter}), and {@link RawFetchLoop} times fetch round trips against each, with no
 * consumer behind them, in alternating runs after both JVMs are warm: the measurement behind ADR 0044. Then
 * {@link ConsumerReadLoop} reads the whole topic from each with a kafka-clients consumer in this (warm) JVM, also
 * alternating: the consume row of {@code kafka-perf} without a fresh client JVM's start and JIT in it.
 */
@Command(name = "kafka-fetch", mixinStandardHelpOptions = true,
        description = "Raw Fetch round trips (8 partitions x 1 MiB), then whole-topic reads by a warm kafka-clients "
                + "consumer, against Kafka 4.4.0 and Tierlog's Kafka listener.")
public final class KafkaFetchCommand implements Callable<Integer> {
    @Mixin
    PackagedServiceOption app;
    @Mixin
    KafkaLibsOption kafkaLibs;
    @Option(names = "--work-dir", defaultValue = "bench/target/kafka-fetch",
            description = "Scratch directory (default: ${DEFAULT-VALUE}).")
    Path work;
    @Option(names = "--records", defaultValue = "500000", description = "Records in the topic (default: ${DEFAULT-VALUE}).")
    long records;
    @Option(names = "--partitions", defaultValue = "8", description = "Partitions (default: ${DEFAULT-VALUE}).")
    int partitions;
    @Option(names = "--fetches", defaultValue = "400", description = "Fetches per run (default: ${DEFAULT-VALUE}).")
    int fetches;
    @Option(names = "--runs", defaultValue = "5", description = "Runs per server (default: ${DEFAULT-VALUE}).")
    int runs;
    @Option(names = "--consumer-runs", defaultValue = "15",
            description = "Whole-topic consumer reads per server, after the fetch runs (default: ${DEFAULT-VALUE}).")
    int consumerRuns;
    @Option(names = "--batch-size", defaultValue = "524288",
            description = "Bytes per batch on both servers (default: ${DEFAULT-VALUE}, kafka-perf's; 16384 is "
                    + "batch.size's default).")
    int batchSize;
    @Option(names = "--service-property", paramLabel = "KEY=VALUE",
            description = "A setting for the index-service (repeatable), e.g. tierlog.kafka.socket-send-buffer-bytes=-1.")
    List<String> serviceProperties = new ArrayList<>();

    private static final int RECORD_SIZE = 1024;
    private static final Duration WARM_UP_LIMIT = Duration.ofSeconds(90);

    @Override
    public Integer call() throws Exception {
        BenchRun setup = BenchRun.prepare(work, app.path());
        Path libs = setup.repo().resolve(kafkaLibs.path()).toAbsolutePath();
        String topic = "raw-fetch";
        long perPartition = records / partitions;
        int perBatch = FullBatchWriter.recordsPerBatch(batchSize, RECORD_SIZE);
        List<RawFetchLoop.Result> kafkaRuns = new ArrayList<>();
        List<RawFetchLoop.Result> tierlogRuns = new ArrayList<>();
        List<ConsumerReadLoop.Result> kafkaReads = new ArrayList<>();
        List<ConsumerReadLoop.Result> tierlogReads = new ArrayList<>();
        String loadSummary;
        String warmUp;
        try (LoadSampler load = LoadSampler.start();
             EmbeddedS3 s3 = EmbeddedS3.start(setup.workDir().resolve("s3"))) {
            s3.createBucket("bench");
            int port = Ports.freeLoopbackPort();
            try (KafkaBroker kafka = KafkaBroker.start(libs, setup.workDir().resolve("kafka"), Map.of());
                 TierlogService tierlog = TierlogService.start(setup.runJar(), setup.workDir().resolve("never"),
                         Durability.NEVER, s3, "bench", serviceArgs(port))) {
                String tierlogBootstrap = "127.0.0.1:" + port;
                for (String bootstrap : List.of(kafka.bootstrapServers(), tierlogBootstrap)) {
                    KafkaPerfCommand.createTopic(bootstrap, topic, partitions,
                            bootstrap.equals(tierlogBootstrap) ? Map.of() : Map.of("segment.bytes", Integer.toString(1 << 30)));
                    FullBatchWriter.write(bootstrap, topic, partitions, records, RECORD_SIZE, batchSize);
                }
                // This JVM's consumer is warmed too: its JIT is what the consumer reads leave out.
                JitWarmup.Outcome outcome = JitWarmup.untilQuiet(
                        List.of(kafka.pid(), tierlog.pid(), ProcessHandle.current().pid()), WARM_UP_LIMIT, round -> {
                            for (String bootstrap : List.of(kafka.bootstrapServers(), tierlogBootstrap)) {
                                RawFetchLoop.run(bootstrap, topic, partitions, perPartition, perBatch, fetches);
                                if (consumerRuns > 0) {
                                    ConsumerReadLoop.run(bootstrap, topic, partitions, records);
                                }
                            }
                        });
                warmUp = "Warm-up, unmeasured: rounds of " + fetches + " fetches" + (consumerRuns > 0
                        ? " and a consumer read" : "") + " from each until the servers' and this JVM's JIT was quiet: "
                        + outcome + ".";
                Workspace.log(warmUp);
                for (int run = 0; run < runs; run++) {
                    boolean kafkaFirst = run % 2 == 0;
                    for (int i = 0; i < 2; i++) {
                        boolean isKafka = (i == 0) == kafkaFirst;
                        RawFetchLoop.Result r = RawFetchLoop.run(isKafka ? kafka.bootstrapServers() : tierlogBootstrap,
                                topic, partitions, perPartition, perBatch, fetches);
                        (isKafka ? kafkaRuns : tierlogRuns).add(r);
                        Workspace.log((isKafka ? "kafka" : "tierlog") + " run " + run + ": " + r.line());
                    }
                }
                for (int run = 0; run < consumerRuns; run++) {
                    boolean kafkaFirst = run % 2 == 0;
                    for (int i = 0; i < 2; i++) {
                        boolean isKafka = (i == 0) == kafkaFirst;
                        ConsumerReadLoop.Result r = ConsumerReadLoop.run(
                                isKafka ? kafka.bootstrapServers() : tierlogBootstrap, topic, partitions, records);
                        (isKafka ? kafkaReads : tierlogReads).add(r);
                        Workspace.log((isKafka ? "kafka" : "tierlog") + " consumer read " + run + ": " + r.line());
                    }
                }
            }
            loadSummary = load.summary();
        }
        String when = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC).format(setup.started());
        String stamp = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HHmmss'Z'").withZone(ZoneOffset.UTC)
                .format(setup.started());
        StringBuilder report = new StringBuilder("# kafka-fetch " + when + " UTC\n\n")
                .append("Run ").append(when).append(" UTC, `").append(setup.git()).append("`; ").append(records)
                .append(" records of ").append(RECORD_SIZE).append(" bytes in ").append(partitions)
                .append(" partitions, batches of ").append(perBatch).append(" records on both; service settings ")
                .append(serviceProperties.isEmpty() ? "as deployed" : String.join(", ", serviceProperties))
                .append("; ").append(runs)
                .append(" runs of ").append(fetches).append(" fetches per server, alternating; ").append(loadSummary)
                .append(" (`uptime` at the start: ").append(MachineInfo.loadAverage().trim()).append("). ")
                .append(warmUp).append("\n\n| run | Kafka 4.4.0 p50 ms | Tierlog p50 ms | Kafka mean ms | Tierlog mean ms "
                        + "| Kafka first bytes p50 ms | Tierlog first bytes p50 ms |\n")
                .append("|---|---|---|---|---|---|---|\n");
        for (int run = 0; run < runs; run++) {
            RawFetchLoop.Result k = kafkaRuns.get(run);
            RawFetchLoop.Result t = tierlogRuns.get(run);
            report.append(String.format("| %d | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f |%n", run, k.p50Ms(), t.p50Ms(),
                    k.meanMs(), t.meanMs(), k.firstBytesP50Ms(), t.firstBytesP50Ms()));
        }
        double k50 = KafkaPerfCommand.median(kafkaRuns, RawFetchLoop.Result::p50Ms);
        double t50 = KafkaPerfCommand.median(tierlogRuns, RawFetchLoop.Result::p50Ms);
        report.append(String.format("%nMedian of the runs' p50: Kafka %.2f ms, Tierlog %.2f ms (Kafka/Tierlog %.2fx); "
                + "to the first bytes: Kafka %.3f ms, Tierlog %.3f ms; bytes per answer: Kafka %,d, Tierlog %,d.%n", k50,
                t50, k50 / t50, KafkaPerfCommand.median(kafkaRuns, RawFetchLoop.Result::firstBytesP50Ms),
                KafkaPerfCommand.median(tierlogRuns, RawFetchLoop.Result::firstBytesP50Ms),
                kafkaRuns.get(0).bytesPerFetch(), tierlogRuns.get(0).bytesPerFetch()));
        if (consumerRuns > 0) {
            report.append(consumerReads(kafkaReads, tierlogReads));
        }
        report.append("\n## Machine\n\n").append(setup.machine()).append('\n');
        Path results = setup.repo().resolve("bench/results/kafka-fetch-" + stamp + ".md");
        Files.writeString(results, report, StandardCharsets.UTF_8);
        System.out.println(report);
        Workspace.log("wrote " + setup.repo().relativize(results));
        return 0;
    }

    /** The consumer reads' table: each pair's records/s and their ratio, then the medians. */
    static String consumerReads(List<ConsumerReadLoop.Result> kafka, List<ConsumerReadLoop.Result> tierlog) {
        StringBuilder out = new StringBuilder(String.format("%n## Whole-topic reads by a warm kafka-clients consumer%n%n"
                + "%d alternating reads per server (Kafka first in even runs), each a new consumer assigned every "
                + "partition from offset 0 and timed from its first poll to its last record.%n%n"
                + "| run | Kafka 4.4.0 records/s | Tierlog records/s | Tierlog/Kafka |%n|---|---|---|---|%n",
                kafka.size()));
        List<Double> ratios = new ArrayList<>();
        for (int run = 0; run < kafka.size(); run++) {
            double k = kafka.get(run).recordsPerSec();
            double t = tierlog.get(run).recordsPerSec();
            ratios.add(t / k);
            out.append(String.format("| %d | %,.0f | %,.0f | %.2fx |%n", run, k, t, t / k));
        }
        double k = KafkaPerfCommand.median(kafka, ConsumerReadLoop.Result::recordsPerSec);
        double t = KafkaPerfCommand.median(tierlog, ConsumerReadLoop.Result::recordsPerSec);
        out.append(String.format("%nMedian records/s: Kafka %,.0f, Tierlog %,.0f (Tierlog/Kafka %.2fx); median of the "
                + "paired ratios %.2fx.%n", k, t, t / k, KafkaPerfCommand.median(ratios, r -> r)));
        return out.toString();
    }

    private List<String> serviceArgs(int port) {
        List<String> args = new ArrayList<>(List.of("-Dtierlog.kafka.enabled=true", "-Dtierlog.kafka.port=" + port));
        serviceProperties.forEach(p -> args.add("-D" + p));
        return args;
    }
}
