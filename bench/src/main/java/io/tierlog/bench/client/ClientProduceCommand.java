package io.tierlog.bench.client;

import io.tierlog.bench.compare.BenchRun;
import io.tierlog.bench.compare.Durability;
import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.JitWarmup;
import io.tierlog.bench.compare.KafkaLibsOption;
import io.tierlog.bench.compare.LoadSampler;
import io.tierlog.bench.compare.PackagedServiceOption;
import io.tierlog.bench.compare.Payload;
import io.tierlog.bench.compare.ProcessCpu;
import io.tierlog.bench.compare.ProduceBody;
import io.tierlog.bench.compare.ProduceSpec;
import io.tierlog.bench.compare.Samples;
import io.tierlog.bench.compare.TierlogService;
import io.tierlog.bench.compare.TierlogSystem;
import io.tierlog.bench.compare.Workspace;
import io.tierlog.bench.kafka.KafkaBroker;
import io.tierlog.bench.kafka.KafkaSystem;
import io.tierlog.client.Consumer;
import io.tierlog.client.ConsumerConfig;
import io.tierlog.client.ConsumerRecord;
import io.tierlog.client.Producer;
import io.tierlog.client.ProducerConfig;
import io.tierlog.client.ProducerRecord;
import io.tierlog.client.ProducerStats;
import io.tierlog.client.RecordMetadata;
import io.tierlog.client.TierlogClient;
import io.tierlog.client.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/**
 * {@code tierlog-bench client-produce}: the client library's {@link Producer} beside the benchmark's own HTTP
 * producer (the {@code compare} benchmark's: record batches built by kafka-clients, 5 requests in flight, one
 * partition per request) against one packaged index-service, and kafka-clients' {@code KafkaProducer} against
 * Kafka 4.4.0, in one run, taking turns. One producer each, unkeyed values into a fresh topic per trial, the same
 * batching everywhere: 512 KiB batches (the HTTP producer: as many records per request), linger 5 ms, 5 requests in
 * flight, idempotence on, no compression, page cache durability on both servers. The client runs twice: with its
 * defaults (5 requests in flight, 1 per partition) and with 5 per partition and no producer-wide limit (its behaviour
 * before ADR 0020), so one run gives before and after.
 */
@Command(name = "client-produce", mixinStandardHelpOptions = true,
        description = "Tierlog's Java client Producer vs the benchmark's HTTP producer (same service) and "
                + "kafka-clients vs Kafka 4.4.0, side by side in one run.")
public final class ClientProduceCommand implements Callable<Integer> {
    @Mixin
    PackagedServiceOption app;
    @Mixin
    KafkaLibsOption kafkaLibs;
    @Option(names = "--work-dir", defaultValue = "bench/target/client-produce",
            description = "Scratch directory (default: ${DEFAULT-VALUE}).")
    Path work;
    @Option(names = "--records", defaultValue = "200000", description = "Records per trial (default: ${DEFAULT-VALUE}).")
    int records;
    @Option(names = "--value-bytes", defaultValue = "1024", description = "Value size (default: ${DEFAULT-VALUE}).")
    int valueBytes;
    @Option(names = "--partitions", defaultValue = "8", description = "Partitions per topic (default: ${DEFAULT-VALUE}).")
    int partitions;
    @Option(names = "--runs", defaultValue = "5", description = "Trials per producer (default: ${DEFAULT-VALUE}).")
    int runs;
    @Option(names = "--warmup-seconds", defaultValue = "90",
            description = "Longest JIT warm-up of both servers (default: ${DEFAULT-VALUE}).")
    int warmupSeconds;
    @Option(names = "--skip-kafka", description = "Leave out the kafka-clients trial (and the broker).")
    boolean skipKafka;
    @Option(names = "--skip-consume", description = "Leave out the reads (client Consumer vs the benchmark's reader).")
    boolean skipConsume;
    @Option(names = "--http-variants", description = "Also send the benchmark producer's batches with the JDK "
            + "HttpClient (sendAsync), as the client library did before ADR 0031: what that HTTP stack costs.")
    boolean httpVariants;
    @Option(names = "--keep", description = "Keep the work directory (service and broker logs, data).")
    boolean keep;

    static final int BATCH_BYTES = 512 * 1024;
    /** Servers below this CPU use (cores, over half a second) count as settled after a trial. */
    static final double SETTLED_CORES = 0.15;
    static final String CLIENT = "Tierlog client Producer (defaults: 5 in flight, 1 per partition)";
    static final String CLIENT_PIPELINED = "Tierlog client Producer (5 in flight per partition, as before ADR 0020)";
    static final String BENCH_HTTP = "benchmark HTTP producer (record batches, 5 in flight)";
    static final String JDK_HTTP = "benchmark batches sent with the JDK HttpClient (sendAsync, 5 in flight)";
    static final String JDK_HTTP_WHOLE = "benchmark batches sent with the JDK HttpClient, each body one buffer (as the client before ADR 0031)";
    static final String KAFKA = "kafka-clients KafkaProducer vs Kafka 4.4.0";
    static final String CLIENT_READ = "read: Tierlog client Consumer (assign, record batches)";
    static final String BENCH_READ = "read: benchmark HTTP reader (record batches, one reader per partition)";

    @FunctionalInterface
    private interface Trial {
        double recordsPerSecond(String topic) throws Exception;
    }

    @Override
    public Integer call() throws Exception {
        BenchRun setup = BenchRun.prepare(work, app.path());
        Path workDir = setup.workDir();
        Payload payload = new Payload(valueBytes, 42);
        // Records per HTTP request of the benchmark's producer: a 512 KiB batch's worth.
        int batchRecords = Math.max(1, BATCH_BYTES / (valueBytes + 16));
        Map<String, List<Double>> results = new LinkedHashMap<>();
        Map<String, List<Double>> cpu = new LinkedHashMap<>();
        Map<String, List<Double>> serverCpuPer = new LinkedHashMap<>();
        // Per producer, the bench JVM's CPU per 100k records by thread kind (ThreadCpu): JIT and GC apart.
        Map<String, Map<String, List<Double>>> threadCpu = new LinkedHashMap<>();
        List<Double> pairedRatios = new ArrayList<>();
        List<Double> pairedReadRatios = new ArrayList<>();
        String warmup;
        String loadSummary;
        try (LoadSampler load = LoadSampler.start();
             EmbeddedS3 s3 = EmbeddedS3.start(workDir.resolve("s3"));
             KafkaBroker broker = skipKafka ? null
                     : KafkaBroker.start(setup.repo().resolve(kafkaLibs.path()), workDir.resolve("kafka"), Map.of())) {
            s3.createBucket("bench");
            try (TierlogService service = TierlogService.start(setup.runJar(), workDir.resolve("tierlog"),
                    Durability.NEVER, s3, "bench", List.of());
                 KafkaSystem kafka = skipKafka ? null : new KafkaSystem(broker)) {
                TierlogSystem tierlog = new TierlogSystem(service, Clock.systemUTC());
                TierlogClient client = TierlogClient.builder().url(service.baseUri().toString()).build();
                Map<String, Trial> trials = new LinkedHashMap<>();
                trials.put(CLIENT, topic -> clientRun(client, payload, topic, ProducerConfig.DEFAULT_MAX_IN_FLIGHT, 1));
                // Before ADR 0020: up to 5 requests per partition and no producer-wide limit.
                trials.put(CLIENT_PIPELINED, topic -> clientRun(client, payload, topic, 5 * partitions, 5));
                trials.put(BENCH_HTTP, topic -> tierlog.produce(topic, new ProduceSpec(records, 1, batchRecords, 0,
                        payload), ProduceBody.RECORD_BATCHES).recordsPerSecond());
                if (httpVariants) {
                    java.net.http.HttpClient jdk = java.net.http.HttpClient.newBuilder()
                            .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
                    trials.put(JDK_HTTP, topic -> JdkHttpProducer.run(jdk, service.baseUri(), topic, partitions,
                            payload, records, batchRecords, ProducerConfig.DEFAULT_MAX_IN_FLIGHT, false));
                    trials.put(JDK_HTTP_WHOLE, topic -> JdkHttpProducer.run(jdk, service.baseUri(), topic, partitions,
                            payload, records, batchRecords, ProducerConfig.DEFAULT_MAX_IN_FLIGHT, true));
                }
                if (!skipKafka) {
                    trials.put(KAFKA, topic -> kafka.produce(topic, new ProduceSpec(records, 1, batchRecords, 0,
                            payload)).recordsPerSecond());
                }
                trials.keySet().forEach(k -> results.put(k, new ArrayList<>()));
                Map<String, Trial> reads = new LinkedHashMap<>();
                if (!skipConsume) {
                    reads.put(CLIENT_READ, topic -> clientConsume(client, topic));
                    reads.put(BENCH_READ, topic -> tierlog.consumeBatches(topic, partitions, records,
                            Duration.ofMinutes(5)).recordsPerSecond());
                    reads.keySet().forEach(k -> results.put(k, new ArrayList<>()));
                }
                int[] topics = {0};
                long self = ProcessHandle.current().pid();
                // The bench JVM is the client under test: until its own JIT is quiet too, its compiler threads' CPU
                // lands on the trials' client CPU (measured: 0.02-0.17 s per 100k records in the first rounds after
                // a warm-up that watched the servers only).
                List<Long> warm = new ArrayList<>(skipKafka ? List.of(service.pid()) : List.of(service.pid(), broker.pid()));
                warm.add(self);
                JitWarmup.Outcome w = JitWarmup.untilQuiet(warm,
                        Duration.ofSeconds(warmupSeconds), round -> {
                            String written = null;
                            for (var t : trials.entrySet()) {
                                String topic = topic(t.getKey(), tierlog, kafka, topics);
                                t.getValue().recordsPerSecond(topic);
                                written = t.getKey().equals(BENCH_HTTP) ? topic : written;
                            }
                            for (Trial read : reads.values()) {
                                read.recordsPerSecond(written);
                            }
                        });
                warmup = w.toString();
                Workspace.log("warm-up: " + warmup);
                List<String> order = new ArrayList<>(trials.keySet());
                List<Long> servers = skipKafka ? List.of(service.pid()) : List.of(service.pid(), broker.pid());
                for (int run = 1; run <= runs; run++) {
                    StringBuilder line = new StringBuilder("run " + run + ":");
                    String written = null;
                    for (String name : order) {
                        String topic = topic(name, tierlog, kafka, topics);
                        // The servers' background work after the previous trial (Tierlog's indexer catching up into
                        // RocksDB, Kafka's flusher) must not be billed to this one: measured as a cause of the spread.
                        boolean settled = ProcessCpu.awaitQuiet(servers, SETTLED_CORES, Duration.ofSeconds(20));
                        System.gc(); // the previous trial's garbage is not collected on this one's clock
                        long serverPid = name.equals(KAFKA) ? broker.pid() : service.pid();
                        // What the two processes burn with no trial running (this JVM hosts the S3Proxy, which the
                        // service calls in the background) is taken off, in proportion to the trial's length.
                        double[] idle = idleCoresOver(self, serverPid, Duration.ofSeconds(1));
                        double clientCpu = ProcessCpu.seconds(self);
                        double serverCpu = ProcessCpu.seconds(serverPid);
                        ThreadCpu.Snapshot threads = ThreadCpu.snapshot();
                        long t0 = System.nanoTime();
                        double rps = trials.get(name).recordsPerSecond(topic);
                        double seconds = (System.nanoTime() - t0) / 1e9;
                        Map<String, Double> byKind = ThreadCpu.snapshot().since(threads);
                        Map<String, List<Double>> kindsOf = threadCpu.computeIfAbsent(name, k -> new LinkedHashMap<>());
                        byKind.forEach((kind, s) -> kindsOf.computeIfAbsent(kind, k -> new ArrayList<>()).add(s * 1e5 / records));
                        clientCpu = Math.max(0, ProcessCpu.seconds(self) - clientCpu - idle[0] * seconds);
                        serverCpu = Math.max(0, ProcessCpu.seconds(serverPid) - serverCpu - idle[1] * seconds);
                        results.get(name).add(rps);
                        cpu.computeIfAbsent(name, k -> new ArrayList<>()).add(clientCpu * 1e5 / records);
                        serverCpuPer.computeIfAbsent(name, k -> new ArrayList<>()).add(serverCpu * 1e5 / records);
                        line.append(String.format(Locale.ROOT, " %s %,.0f (CPU s per 100k beyond idle: client %.2f, server %.2f%s;"
                                        + " bench JVM threads, s per 100k: %s);",
                                shortName(name), rps, clientCpu * 1e5 / records, serverCpu * 1e5 / records,
                                settled ? "" : ", server not settled", ThreadCpu.format(byKind, 1e5 / records)));
                        if (name.equals(BENCH_HTTP)) {
                            written = topic;
                        }
                    }
                    int last = results.get(CLIENT).size() - 1;
                    pairedRatios.add(results.get(CLIENT).get(last) / results.get(BENCH_HTTP).get(last));
                    // Reads of what the benchmark's producer just wrote (hot, from offset 0), taking turns going first.
                    List<String> readOrder = new ArrayList<>(reads.keySet());
                    if (run % 2 == 0) {
                        Collections.reverse(readOrder);
                    }
                    for (String name : readOrder) {
                        ProcessCpu.awaitQuiet(servers, SETTLED_CORES, Duration.ofSeconds(20));
                        System.gc();
                        // CPU per record as for the producers: the reads' client side is the bench JVM.
                        double[] idle = idleCoresOver(self, service.pid(), Duration.ofSeconds(1));
                        double clientCpu = ProcessCpu.seconds(self);
                        double serverCpu = ProcessCpu.seconds(service.pid());
                        long t0 = System.nanoTime();
                        double rps = reads.get(name).recordsPerSecond(written);
                        double seconds = (System.nanoTime() - t0) / 1e9;
                        clientCpu = Math.max(0, ProcessCpu.seconds(self) - clientCpu - idle[0] * seconds);
                        serverCpu = Math.max(0, ProcessCpu.seconds(service.pid()) - serverCpu - idle[1] * seconds);
                        results.get(name).add(rps);
                        cpu.computeIfAbsent(name, k -> new ArrayList<>()).add(clientCpu * 1e5 / records);
                        serverCpuPer.computeIfAbsent(name, k -> new ArrayList<>()).add(serverCpu * 1e5 / records);
                        line.append(String.format(Locale.ROOT, " %s %,.0f (CPU s per 100k beyond idle: client %.2f, server %.2f);",
                                name.equals(CLIENT_READ) ? "client-read" : "bench-read", rps, clientCpu * 1e5 / records,
                                serverCpu * 1e5 / records));
                    }
                    if (!reads.isEmpty()) {
                        int r = results.get(CLIENT_READ).size() - 1;
                        pairedReadRatios.add(results.get(CLIENT_READ).get(r) / results.get(BENCH_READ).get(r));
                    }
                    Workspace.log(line.toString());
                    order.add(order.remove(0)); // take turns going first
                }
            }
            loadSummary = load.summary();
        } finally {
            if (!keep) {
                Workspace.deleteTree(workDir);
            }
        }
        print(results, cpu, serverCpuPer, pairedRatios, pairedReadRatios, setup, loadSummary, warmup, batchRecords);
        System.out.printf(Locale.ROOT, "%nBench-JVM CPU s per 100k records by thread (medians; jit: C1/C2 compilers, gc: GC and "
                + "VM threads, main: the sending thread, producer: live producer threads, ended: threads that ended in the "
                + "trial, a closed producer's):%n");
        threadCpu.forEach((name, kinds) -> {
            Map<String, Double> medians = new LinkedHashMap<>();
            kinds.forEach((kind, values) -> medians.put(kind, new Samples(values).median()));
            System.out.printf(Locale.ROOT, "- %s: %s%n", name, ThreadCpu.format(medians, 1));
        });
        return 0;
    }

    private String topic(String trial, TierlogSystem tierlog, KafkaSystem kafka, int[] counter) throws Exception {
        String name = "client-produce-" + (++counter[0]);
        if (trial.equals(KAFKA)) {
            kafka.createTopic(name, partitions, Durability.NEVER);
        } else {
            tierlog.createTopic(name, partitions, Durability.NEVER);
        }
        return name;
    }

    private double clientRun(TierlogClient client, Payload payload, String topic, int maxInFlight, int perPartition) {
        ProducerConfig config = ProducerConfig.defaults().withLinger(Duration.ofMillis(5)).withBatchBytes(BATCH_BYTES)
                .withBuffer(32L << 20, ProducerConfig.WhenFull.BLOCK).withMaxInFlight(maxInFlight)
                .withMaxInFlightPerPartition(perPartition);
        try (Producer producer = client.producer(config)) {
            producer.send(new ProducerRecord(topic, null, null, payload.bytes(0), null, null)).join(); // metadata
            long start = System.nanoTime();
            CompletableFuture<RecordMetadata> last = null;
            for (int i = 0; i < records; i++) {
                last = producer.send(new ProducerRecord(topic, null, null, payload.bytes(i), null, null));
            }
            producer.flush();
            last.join();
            double rps = records / ((System.nanoTime() - start) / 1e9);
            // What the requests cost: out-of-order refusals and retries resend whole batches.
            ProducerStats s = producer.stats();
            Workspace.log(String.format(Locale.ROOT, "  client maxInFlight %d (%d per partition): %,.0f records/s; %d requests, %d refused "
                            + "out of order (409), %d retried, %.0f records per batch", maxInFlight, perPartition, rps, s.requests(),
                    s.outOfOrder(), s.retries(), s.recordsPerBatch()));
            return rps;
        }
    }

    /**
     * Reads {@code topic} from offset 0 to its {@code records} with the client's {@link Consumer}, as the benchmark's
     * reader does: every partition assigned, record batches, 2,000 records and 4 MiB per fetch, value sizes read in
     * place ({@link ConsumerRecord#valueSize}) as the reader reads them.
     */
    private double clientConsume(TierlogClient client, String topic) {
        ConsumerConfig config = ConsumerConfig.defaults().withRecordBatches(true).withMaxPollRecords(2000)
                .withFetchMaxBytes(4 << 20);
        try (Consumer consumer = client.consumer(config)) {
            List<TopicPartition> all = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                all.add(new TopicPartition(topic, p));
            }
            consumer.assign(all);
            // Positions set before the clock, as the benchmark's reader asks for its start offsets before its clock.
            all.forEach(tp -> consumer.seek(tp, 0));
            long start = System.nanoTime();
            long got = 0;
            long bytes = 0;
            long deadline = start + Duration.ofMinutes(5).toNanos();
            while (got < records) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("client read " + got + " of " + records + " records in 5 min");
                }
                for (ConsumerRecord r : consumer.poll(Duration.ofSeconds(1))) {
                    got++;
                    // The value's size in place, as the reader sums Kafka's Record.valueSize() without copying: value()
                    // would copy every value (measured: that allocation alone, 100 MB per 100k records, costs this JVM
                    // more than the whole read after the System.gc() before each trial shrinks its heap).
                    bytes += r.valueSize();
                }
            }
            if (bytes != (long) records * valueBytes) {
                throw new IllegalStateException("client read " + bytes + " value bytes, expected " + (long) records * valueBytes);
            }
            return got / ((System.nanoTime() - start) / 1e9);
        }
    }

    /** Cores used by each of the two processes over {@code window} with nothing running. */
    private static double[] idleCoresOver(long self, long server, Duration window) throws InterruptedException {
        double a = ProcessCpu.seconds(self);
        double b = ProcessCpu.seconds(server);
        Thread.sleep(window.toMillis());
        double s = window.toMillis() / 1e3;
        return new double[] {(ProcessCpu.seconds(self) - a) / s, (ProcessCpu.seconds(server) - b) / s};
    }

    private static String ratios(List<Double> values) {
        StringBuilder sb = new StringBuilder();
        for (double v : values) {
            sb.append(sb.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", v));
        }
        return sb.toString();
    }

    private static String shortName(String name) {
        return name.equals(CLIENT) ? "client" : name.equals(CLIENT_PIPELINED) ? "client-pipelined" : name.equals(BENCH_HTTP)
                ? "bench-http" : name.equals(JDK_HTTP) ? "jdk-http"
                : name.equals(JDK_HTTP_WHOLE) ? "jdk-http-whole" : "kafka";
    }

    private void print(Map<String, List<Double>> results, Map<String, List<Double>> cpu,
                       Map<String, List<Double>> serverCpu, List<Double> paired, List<Double> pairedReads,
                       BenchRun setup, String load, String warmup, int batchRecords) {
        System.out.printf(Locale.ROOT, "Run %s, git `%s`, %s x %s, took %d s; %s.%n%n", setup.started(), setup.git(),
                setup.machine().get("nproc"), setup.machine().get("cpu"),
                Duration.between(setup.started(), Instant.now()).toSeconds(), load);
        System.out.printf(Locale.ROOT, "%d records of %d B per trial, %d partitions, one producer, %d trials each "
                        + "taking turns, page cache durability (no fsync) on both servers; HTTP producer requests of %d "
                        + "records. Warm-up: %s.%n%n", records, valueBytes, partitions, runs, batchRecords, warmup);
        double client = new Samples(results.get(CLIENT)).median();
        double bench = new Samples(results.get(BENCH_HTTP)).median();
        double kafka = results.containsKey(KAFKA) ? new Samples(results.get(KAFKA)).median() : Double.NaN;
        double clientRead = results.containsKey(CLIENT_READ) ? new Samples(results.get(CLIENT_READ)).median()
                : Double.NaN;
        System.out.println("| producer or reader | records/s: median (range) | MB/s | client / this "
                + "| CPU s per 100k records: bench JVM (client side) | server |");
        System.out.println("|---|---|---|---|---|---|");
        for (var e : results.entrySet()) {
            Samples s = new Samples(e.getValue());
            System.out.printf(Locale.ROOT, "| %s | %s | %.1f | %.2f | %s | %s |%n", e.getKey(), s.medianAndRange("%,.0f"),
                    s.median() * valueBytes / 1e6, (e.getKey().startsWith("read:") ? clientRead : client) / s.median(),
                    cpu.containsKey(e.getKey()) ? String.format(Locale.ROOT, "%.2f", new Samples(cpu.get(e.getKey())).median()) : "",
                    serverCpu.containsKey(e.getKey()) ? String.format(Locale.ROOT, "%.2f",
                            new Samples(serverCpu.get(e.getKey())).median()) : "");
        }
        // Ratios of the trials of one round (run back to back, so under about the same load), then their median:
        // steadier than the ratio of medians on a shared machine.
        System.out.printf(Locale.ROOT, "%nPaired (per round) client / benchmark HTTP producer: median %.2f, rounds %s%n",
                new Samples(paired).median(), ratios(paired));
        if (!pairedReads.isEmpty()) {
            System.out.printf(Locale.ROOT, "Paired (per round) client Consumer / benchmark reader: median %.2f, rounds %s%n",
                    new Samples(pairedReads).median(), ratios(pairedReads));
        }
        if (results.containsKey(CLIENT_READ)) {
            System.out.printf(Locale.ROOT, "%nread: client Consumer / benchmark HTTP reader: %.2f%n",
                    new Samples(results.get(CLIENT_READ)).median() / new Samples(results.get(BENCH_READ)).median());
        }
        System.out.printf(Locale.ROOT, "%nclient / benchmark HTTP producer: %.2f; client / kafka-clients+Kafka: %.2f; "
                        + "client defaults / 5 per partition: %.2f%n", client / bench, client / kafka,
                client / new Samples(results.get(CLIENT_PIPELINED)).median());
    }
}
