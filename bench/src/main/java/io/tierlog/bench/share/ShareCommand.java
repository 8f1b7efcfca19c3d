package io.tierlog.bench.share;

import io.tierlog.bench.compare.Durability;
import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.JitWarmup;
import io.tierlog.bench.compare.KafkaLibsOption;
import io.tierlog.bench.compare.LoadSampler;
import io.tierlog.bench.compare.BenchRun;
import io.tierlog.bench.compare.PackagedServiceOption;
import io.tierlog.bench.compare.Payload;
import io.tierlog.bench.compare.ProduceBody;
import io.tierlog.bench.compare.ProduceSpec;
import io.tierlog.bench.compare.Samples;
import io.tierlog.bench.compare.TierlogService;
import io.tierlog.bench.compare.TierlogSystem;
import io.tierlog.bench.compare.Workspace;
import io.tierlog.bench.http.BlockingHttp;
import io.tierlog.bench.kafka.KafkaBroker;
import io.tierlog.bench.kafka.KafkaSystem;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code tierlog-bench share}: share groups (queues on the log), Tierlog's HTTP share groups (docs/share-groups.md)
 * beside Kafka 4.4.0's {@link KafkaShareConsumer} (KIP-932), issue #24.
 *
 * <ul>
 *   <li><b>Throughput</b>: a topic of {@code --records} records is drained by a fresh share group (started at the
 *   earliest offset) of N consumers, each leasing up to 500 records at a time and accepting all of them (Tierlog:
 *   {@code lease} then {@code acks} per batch, the acks of one lease sent while the next is asked for
 *   ({@link ShareWorker}); Kafka: {@code poll} in the default implicit mode, where a batch is
 *   accepted by the next poll, and a {@code commitSync} at the end). Records/s from the first record delivered
 *   to the last one acknowledged.</li>
 *   <li><b>Redelivery</b>: one consumer takes 100 records and dies holding them (stops; no release, no close);
 *   another consumer of the same group is polling; the time from a record's delivery to the first consumer to its
 *   redelivery to the second, the slowest record of each trial, with the lease / acquisition lock set to
 *   {@code --lock-ms} on both.</li>
 * </ul>
 */
@Command(name = "share", mixinStandardHelpOptions = true,
        description = "Share groups: records/s delivered and accepted with N consumers, and redelivery after a "
                + "consumer dies; Tierlog vs Kafka 4.4.0's KafkaShareConsumer.")
public final class ShareCommand implements Callable<Integer> {
    private static final int MAX_RECORDS = 500;
    private static final Duration TIMEOUT = Duration.ofMinutes(5);
    private static final String TOPIC = "share-bench";
    private static final String REDELIVERY_TOPIC = "share-redelivery";
    private static final int HELD = 100;
    /** No warm-up round starts after this long per server. */
    private static final Duration WARM_UP_LIMIT = Duration.ofSeconds(90);
    /** The third system of {@code --kafka-protocol}: KafkaShareConsumers against the index-service's listener. */
    private static final String KAFKA_PROTOCOL = "Tierlog-Kafka";

    @Mixin
    PackagedServiceOption app;
    @Mixin
    KafkaLibsOption kafkaLibs;
    @Option(names = "--work-dir", defaultValue = "bench/target/share")
    Path work;
    @Option(names = "--records", defaultValue = "100000", description = "Records per drain (default: ${DEFAULT-VALUE}).")
    long records;
    @Option(names = "--value-bytes", defaultValue = "1024")
    int valueBytes;
    @Option(names = "--partitions", defaultValue = "8")
    int partitions;
    @Option(names = "--consumers", defaultValue = "1,8,32", split = ",")
    List<Integer> consumers;
    @Option(names = "--runs", defaultValue = "3", description = "Drains per system and consumer count (default: ${DEFAULT-VALUE}).")
    int runs;
    @Option(names = "--redelivery-trials", defaultValue = "10")
    int redeliveryTrials;
    @Option(names = "--lock-ms", defaultValue = "2000",
            description = "Lease (Tierlog leaseMs) and acquisition lock (Kafka share.record.lock.duration.ms) of the "
                    + "redelivery trials (default: ${DEFAULT-VALUE}).")
    long lockMs;
    @Option(names = "--service-fsync", defaultValue = "NEVER",
            description = "The index-service's tierlog.fsync, which share-group state follows too: NEVER (page cache, "
                    + "as Kafka, whose share state is not fsynced either) or ALWAYS (default: ${DEFAULT-VALUE}).")
    Durability serviceFsync;
    @Option(names = "--lease-answer", defaultValue = "ranges", description = "The Tierlog workers' lease answer: "
            + "ranges (Accept: application/vnd.tierlog.leased-ranges: runs under range leases, acked one entry per run), "
            + "batches (Accept: application/vnd.tierlog.leased-batches: one lease per record, acked one entry per "
            + "record); both with the stored record batches walked with kafka-clients, as a KafkaShareConsumer walks a "
            + "ShareFetch answer; or json (per-record leases) (default: ${DEFAULT-VALUE}).")
    String leaseAnswer;
    @Option(names = "--kafka-protocol", description = "Also drain the service's topic with KafkaShareConsumers over "
            + "its Kafka listener (KIP-932 on the same share-group engine as the HTTP workers).")
    boolean kafkaProtocol;
    @Option(names = "--keep")
    boolean keep;

    private int groupCounter;

    @Override
    public Integer call() throws Exception {
        BenchRun setup = BenchRun.prepare(work, app.path());
        Path repo = setup.repo();
        Path workDir = setup.workDir();
        Path runJar = setup.runJar();
        Instant started = setup.started();
        String git = setup.git();
        Map<String, String> machine = setup.machine();
        Map<String, String> kafkaConfig = new LinkedHashMap<>();
        // Lets the redelivery trials' groups set a short acquisition lock (the broker's minimum is 15 s by default).
        kafkaConfig.put("group.share.min.record.lock.duration.ms", "1000");
        Map<String, List<Double>> throughput = new LinkedHashMap<>();
        Map<String, List<Double>> redelivery = new LinkedHashMap<>();
        Map<String, List<Double>> perPoll = new LinkedHashMap<>();
        Map<String, List<Double>> serverCpu = new LinkedHashMap<>();
        Map<String, List<Double>> benchCpu = new LinkedHashMap<>();
        String shareVersion;
        String warmUp;
        try (LoadSampler load = LoadSampler.start();
             EmbeddedS3 s3 = EmbeddedS3.start(workDir.resolve("s3"));
             KafkaBroker broker = KafkaBroker.start(repo.resolve(kafkaLibs.path()), workDir.resolve("kafka"), kafkaConfig)) {
            s3.createBucket("bench");
            shareVersion = enableShareGroups(broker.bootstrapServers());
            Workspace.log("Kafka " + broker.bootstrapServers() + ", " + shareVersion);
            int listenerPort = io.tierlog.bench.compare.Ports.freeLoopbackPort();
            List<String> listener = kafkaProtocol ? List.of("-Dtierlog.kafka.enabled=true", "-Dtierlog.kafka.host=127.0.0.1",
                    "-Dtierlog.kafka.port=" + listenerPort) : List.of();
            try (TierlogService service = TierlogService.start(runJar, workDir.resolve("tierlog"), serviceFsync, s3,
                    "bench", listener);
                 KafkaSystem kafka = new KafkaSystem(broker);
                 Admin admin = admin(broker.bootstrapServers())) {
                TierlogSystem tierlog = new TierlogSystem(service, Clock.systemUTC());
                Payload payload = new Payload(valueBytes, 7);
                ProduceSpec fill = new ProduceSpec(records, 1, 1000, 0, payload);
                kafka.createTopic(TOPIC, partitions, Durability.NEVER);
                kafka.produce(TOPIC, fill);
                tierlog.createTopic(TOPIC, partitions, Durability.NEVER);
                tierlog.produce(TOPIC, fill, ProduceBody.RECORD_BATCHES);
                ProduceSpec small = new ProduceSpec(HELD, 1, HELD, 0, new Payload(100, 8));
                kafka.createTopic(REDELIVERY_TOPIC, 1, Durability.NEVER);
                kafka.produce(REDELIVERY_TOPIC, small);
                tierlog.createTopic(REDELIVERY_TOPIC, 1, Durability.NEVER);
                tierlog.produce(REDELIVERY_TOPIC, small, ProduceBody.RECORD_BATCHES);
                Workspace.log("topics filled: " + records + " records of " + valueBytes + " B in " + partitions
                        + " partitions on both");
                // Unmeasured warm-up drains of every measured shape until each server's JIT is quiet twice in a row
                // (the rule of compare and kafka-perf): after one drain each, the service still compiled methods of
                // 100-800 ms each through the first four measured runs (JFR, 2026-12-06).
                String viaListener = "127.0.0.1:" + listenerPort;
                Admin listenerAdmin = kafkaProtocol ? admin(viaListener) : null;
                JitWarmup.Outcome kafkaWarm = JitWarmup.untilQuiet(List.of(broker.pid()), WARM_UP_LIMIT, 2, round -> {
                    for (int n : consumers) {
                        drainKafka(broker, admin, n);
                    }
                });
                JitWarmup.Outcome tierlogWarm = JitWarmup.untilQuiet(List.of(service.pid()), WARM_UP_LIMIT, 2,
                        round -> {
                            for (int n : consumers) {
                                drainTierlog(service, n);
                                if (kafkaProtocol) {
                                    drainShareConsumers(viaListener, service.pid(), listenerAdmin, n,
                                            "listener-drain");
                                }
                            }
                        });
                warmUp = "Warm-up, unmeasured, rounds of one drain per consumer count and system until the server's "
                        + "JIT was quiet in two rounds in a row: Kafka " + kafkaWarm + "; Tierlog " + tierlogWarm + ".";
                Workspace.log(warmUp);
                List<String> systems = kafkaProtocol ? List.of("Kafka", "Tierlog", KAFKA_PROTOCOL)
                        : List.of("Kafka", "Tierlog");
                for (int run = 1; run <= runs; run++) {
                    for (int n : consumers) {
                        for (int side = 0; side < systems.size(); side++) {
                            // The order rotates from cell to cell, so no system always drains first.
                            String system = systems.get((side + run + n) % systems.size());
                            Drain drain = switch (system) {
                                case "Kafka" -> drainKafka(broker, admin, n);
                                case "Tierlog" -> drainTierlog(service, n);
                                default -> drainShareConsumers(viaListener, service.pid(), listenerAdmin, n,
                                        "listener-drain");
                            };
                            throughput.computeIfAbsent(system + "/" + n, k -> new ArrayList<>()).add(drain.rate());
                            perPoll.computeIfAbsent(system + "/" + n, k -> new ArrayList<>()).add(drain.perPoll());
                            serverCpu.computeIfAbsent(system + "/" + n, k -> new ArrayList<>()).add(drain.serverCpu());
                            benchCpu.computeIfAbsent(system + "/" + n, k -> new ArrayList<>()).add(drain.benchCpu());
                            Workspace.log(String.format(Locale.ROOT, "run %d %-15s %2d consumers: %,.0f records/s, "
                                    + "%.0f records per poll/lease, CPU s per 100k records: server %.2f, bench JVM "
                                    + "%.2f", run, system, n, drain.rate(), drain.perPoll(), drain.serverCpu(),
                                    drain.benchCpu()));
                        }
                    }
                }
                for (int trial = 1; trial <= redeliveryTrials; trial++) {
                    for (int side = 0; side < 2; side++) {
                        boolean isKafka = (side == 0) == (trial % 2 == 1);
                        double ms = isKafka ? redeliverKafka(broker.bootstrapServers(), admin)
                                : redeliverTierlog(service.baseUri());
                        String system = isKafka ? "Kafka" : "Tierlog";
                        redelivery.computeIfAbsent(system, k -> new ArrayList<>()).add(ms);
                        Workspace.log(String.format(Locale.ROOT, "redelivery trial %d %-7s: %.0f ms", trial, system, ms));
                    }
                }
                if (listenerAdmin != null) {
                    listenerAdmin.close();
                }
            }
            print(throughput, perPoll, serverCpu, benchCpu, redelivery, started, git, machine, load.summary(),
                    shareVersion, warmUp);
        } finally {
            if (!keep) {
                Workspace.deleteTree(workDir);
            }
        }
        return 0;
    }

    private static Admin admin(String bootstrap) {
        Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(a);
    }

    /** Finalizes {@code share.version} 1 if the freshly formatted cluster has not; says what it found. */
    private static String enableShareGroups(String bootstrap) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            FinalizedVersionRange v = admin.describeFeatures().featureMetadata().get().finalizedFeatures()
                    .get("share.version");
            if (v != null && v.maxVersionLevel() >= 1) {
                return "share.version " + v.maxVersionLevel() + " finalized at format (share groups on by default)";
            }
            admin.updateFeatures(Map.of("share.version", new FeatureUpdate((short) 1,
                    FeatureUpdate.UpgradeType.UPGRADE)), new UpdateFeaturesOptions()).all().get();
            return "share.version upgraded to 1 with the Admin API (was " + (v == null ? "absent" : v.maxVersionLevel())
                    + ")";
        }
    }

    private LeaseAnswer form() {
        return LeaseAnswer.parse(leaseAnswer);
    }

    private String newGroup(String prefix) {
        return prefix + "-" + (++groupCounter);
    }

    /** Sets a Kafka share group's dynamic configs (before its first member joins). */
    private static void configureKafkaGroup(Admin admin, String group, Map<String, String> configs) throws Exception {
        List<AlterConfigOp> ops = new ArrayList<>();
        configs.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all().get();
    }

    private static Properties shareProps(String bootstrap, String group, String mode) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(MAX_RECORDS));
        p.put("share.acknowledgement.mode", mode);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return p;
    }

    /** Runs {@code n} workers on their own threads; fails if any fails. */
    private static void runWorkers(int n, String name, Worker worker) {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int id = i;
            CompletableFuture<Void> f = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    worker.run(id);
                    f.complete(null);
                } catch (Throwable e) {
                    f.completeExceptionally(e);
                }
            }, name + "-" + i);
            t.setDaemon(true);
            t.start();
            all.add(f);
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
    }

    @FunctionalInterface
    private interface Worker {
        void run(int id) throws Exception;
    }

    /**
     * A drain's records/s, the mean number of records a non-empty poll (Kafka) or lease (Tierlog) handed out, and the
     * CPU seconds per 100k records the server process (Kafka's broker, Tierlog's index-service) and this JVM (the
     * consumers) used during it.
     */
    private record Drain(double rate, double perPoll, double serverCpu, double benchCpu) {
    }

    /** CPU use of the server process and this JVM from a drain's start. */
    private record CpuMark(long pid, double server, double bench) {
        static CpuMark start(long pid) {
            return new CpuMark(pid, ProcessCpu.seconds(pid), ProcessCpu.self());
        }

        /** The drain's result with the CPU used since the mark, per 100k of {@code records}. */
        Drain drain(double rate, double perPoll, long records) {
            double per = 100_000.0 / records;
            return new Drain(rate, perPoll, (ProcessCpu.seconds(pid) - server) * per, (ProcessCpu.self() - bench) * per);
        }
    }

    /** Drains the topic with a fresh Kafka share group of {@code n} consumers. */
    private Drain drainKafka(KafkaBroker broker, Admin admin, int n) throws Exception {
        return drainShareConsumers(broker.bootstrapServers(), broker.pid(), admin, n, "kafka-drain");
    }

    /**
     * Drains the topic with a fresh share group of {@code n} {@code KafkaShareConsumer}s at {@code bootstrap}
     * (Kafka's broker, or the index-service's Kafka listener), the CPU counted of process {@code pid}.
     */
    private Drain drainShareConsumers(String bootstrap, long pid, Admin admin, int n, String prefix) throws Exception {
        String group = newGroup(prefix);
        configureKafkaGroup(admin, group, Map.of("share.auto.offset.reset", "earliest"));
        AtomicLong delivered = new AtomicLong();
        AtomicLong polls = new AtomicLong();
        AtomicLong first = new AtomicLong(Long.MAX_VALUE);
        AtomicLong last = new AtomicLong();
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        CpuMark cpu = CpuMark.start(pid);
        runWorkers(n, "kafka-share", id -> {
            try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(shareProps(bootstrap, group, "implicit"))) {
                c.subscribe(List.of(TOPIC));
                while (delivered.get() < records) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("Kafka drain: " + delivered.get() + " of " + records);
                    }
                    ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(100));
                    if (!rs.isEmpty()) {
                        first.accumulateAndGet(System.nanoTime(), Math::min);
                        delivered.addAndGet(rs.count());
                        polls.incrementAndGet();
                    }
                }
                c.commitSync(); // implicit mode: accepts the last batch delivered
                last.accumulateAndGet(System.nanoTime(), Math::max);
            }
        });
        return cpu.drain(records / ((last.get() - first.get()) / 1e9), (double) delivered.get() / polls.get(), records);
    }

    /**
     * Drains the topic with a fresh Tierlog share group of {@code n} workers ({@link ShareWorker}: lease, then accept
     * every record, the acks of one lease sent while the next lease is asked for, as Kafka's implicit mode sends
     * them with its next fetch).
     */
    private Drain drainTierlog(TierlogService service, int n) throws Exception {
        URI base = service.baseUri();
        String group = newGroup("tierlog-drain");
        putConfig(base, group);
        AtomicLong accepted = new AtomicLong();
        AtomicLong leases = new AtomicLong();
        AtomicLong first = new AtomicLong(Long.MAX_VALUE);
        AtomicLong last = new AtomicLong();
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        CpuMark cpu = CpuMark.start(service.pid());
        runWorkers(n, "tierlog-share", id -> {
            try (ShareWorker worker = new ShareWorker(base, group, TOPIC, MAX_RECORDS, 30_000, 200, form())) {
                CompletableFuture<?> acking = CompletableFuture.completedFuture(null);
                while (accepted.get() < records) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("Tierlog drain: " + accepted.get() + " of " + records);
                    }
                    LeasedBatch leased = worker.lease(); // while the previous batch's acks are in flight
                    acking.join(); // one acks request in flight per worker; throws if an accept was refused
                    if (leased.isEmpty()) {
                        continue;
                    }
                    first.accumulateAndGet(System.nanoTime(), Math::min);
                    leases.incrementAndGet();
                    acking = worker.accept(leased).thenAccept(ok -> {
                        last.accumulateAndGet(System.nanoTime(), Math::max);
                        accepted.addAndGet(ok);
                    });
                }
                acking.join();
            }
        });
        if (accepted.get() != records) {
            throw new IllegalStateException("Tierlog accepted " + accepted.get() + " of " + records);
        }
        return cpu.drain(records / ((last.get() - first.get()) / 1e9), (double) records / leases.get(), records);
    }

    /**
     * A Kafka consumer acquires {@value #HELD} records and stops (no acknowledgement, no close, explicit mode);
     * another polls; ms from the slowest record's first delivery to its redelivery.
     */
    private double redeliverKafka(String bootstrap, Admin admin) throws Exception {
        String group = newGroup("kafka-redeliver");
        configureKafkaGroup(admin, group, Map.of("share.auto.offset.reset", "earliest",
                "share.record.lock.duration.ms", Long.toString(lockMs)));
        Map<Long, Long> firstDelivery = new HashMap<>();
        KafkaShareConsumer<byte[], byte[]> dead = new KafkaShareConsumer<>(shareProps(bootstrap, group, "explicit"));
        try {
            dead.subscribe(List.of(REDELIVERY_TOPIC));
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (firstDelivery.size() < HELD) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Kafka: the first consumer got " + firstDelivery.size());
                }
                for (ConsumerRecord<byte[], byte[]> r : dead.poll(Duration.ofMillis(50))) {
                    firstDelivery.putIfAbsent(r.offset(), System.nanoTime());
                }
            }
            // From here the first consumer is "dead": it never polls, acknowledges or closes until the end.
            Map<Long, Long> redelivered = new HashMap<>();
            try (KafkaShareConsumer<byte[], byte[]> survivor = new KafkaShareConsumer<>(shareProps(bootstrap, group,
                    "implicit"))) {
                survivor.subscribe(List.of(REDELIVERY_TOPIC));
                while (redelivered.size() < HELD) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("Kafka: redelivered " + redelivered.size());
                    }
                    for (ConsumerRecord<byte[], byte[]> r : survivor.poll(Duration.ofMillis(20))) {
                        redelivered.putIfAbsent(r.offset(), System.nanoTime());
                    }
                }
                survivor.commitSync();
            }
            return slowest(firstDelivery, redelivered);
        } finally {
            dead.close(Duration.ofSeconds(5));
        }
    }

    /** As {@link #redeliverKafka}: one lease of {@value #HELD} records never acknowledged; another consumer leasing. */
    private double redeliverTierlog(URI base) throws Exception {
        String group = newGroup("tierlog-redeliver");
        putConfig(base, group);
        Map<Long, Long> firstDelivery = new HashMap<>();
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        try (ShareWorker dead = new ShareWorker(base, group, REDELIVERY_TOPIC, HELD, lockMs, 0, form());
             ShareWorker survivor = new ShareWorker(base, group, REDELIVERY_TOPIC, HELD, 30_000, 1000, form())) {
            while (firstDelivery.size() < HELD) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Tierlog: the first consumer got " + firstDelivery.size());
                }
                for (long offset : dead.lease().offsets()) {
                    firstDelivery.putIfAbsent(offset, System.nanoTime());
                }
            }
            Map<Long, Long> redelivered = new HashMap<>();
            while (redelivered.size() < HELD) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Tierlog: redelivered " + redelivered.size());
                }
                LeasedBatch leased = survivor.lease();
                long now = System.nanoTime();
                for (long offset : leased.offsets()) {
                    redelivered.putIfAbsent(offset, now);
                }
                if (!leased.isEmpty()) {
                    survivor.accept(leased).join();
                }
            }
            return slowest(firstDelivery, redelivered);
        }
    }

    private static double slowest(Map<Long, Long> first, Map<Long, Long> again) {
        long worst = 0;
        for (Map.Entry<Long, Long> e : first.entrySet()) {
            worst = Math.max(worst, again.get(e.getKey()) - e.getValue());
        }
        return worst / 1e6;
    }

    private static void putConfig(URI base, String group) throws Exception {
        byte[] body = "{\"start\":\"earliest\"}".getBytes();
        BlockingHttp.Posted r = put(base.resolve("/v1/share-groups/" + group + "/config"), body);
        if (r.status() != 200) {
            throw new IllegalStateException("share-group config answered " + r.status() + ": " + r.bodyText());
        }
    }

    private static BlockingHttp.Posted put(URI u, byte[] body) throws Exception {
        java.net.http.HttpResponse<byte[]> r = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(u).header("Content-Type", "application/json")
                        .PUT(java.net.http.HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofByteArray());
        return new BlockingHttp.Posted(r.statusCode(), r.body());
    }

    private void print(Map<String, List<Double>> throughput, Map<String, List<Double>> perPoll,
                       Map<String, List<Double>> serverCpu, Map<String, List<Double>> benchCpu,
                       Map<String, List<Double>> redelivery, Instant started,
                       String git, Map<String, String> machine, String load, String shareVersion,
                       String warmUp) {
        System.out.printf(Locale.ROOT, "Run %s, git `%s`, %s × %s, took %d s; %s.%n%n%s%n%n", started, git,
                machine.get("nproc"), machine.get("cpu"), Duration.between(started, Instant.now()).toSeconds(), load,
                warmUp);
        System.out.printf(Locale.ROOT, "Drain of %,d records of %d B in %d partitions by a fresh share group started at "
                        + "the earliest offset, %d records per lease (Tierlog maxRecords) and poll (Kafka max.poll.records, "
                        + "its default; Kafka's default share.acquire.mode batch_optimized may hand out more to end on a "
                        + "stored batch's boundary: see the last column); medians of %d drains per cell, the "
                        + "systems alternating. Kafka 4.4.0: %s; `KafkaShareConsumer`, implicit acknowledgement, "
                        + "`commitSync` at the end. Tierlog: `lease` (leaseMs 30000, waitMs 200) and one `acks` "
                        + "request accepting the batch, sent on a second connection while the next lease is asked for "
                        + "(as Kafka's implicit mode sends a poll's acknowledgements with its next fetch), %s, each "
                        + "leased value copied out once (as the ByteArrayDeserializer); index-service with %s (share-group state follows it: written "
                        + "to the page cache before each answer%s).%n%n", records, valueBytes, partitions, MAX_RECORDS,
                runs, shareVersion, switch (form()) {
                    case RANGES -> "lease answers as leased record batches under range leases (`Accept: "
                            + "application/vnd.tierlog.leased-ranges`: a range lease per run of records in a header, "
                            + "the stored batches CRC-checked and walked with kafka-clients as a ShareFetch answer is; "
                            + "one acks entry per run)";
                    case BATCHES -> "lease answers as leased record batches (`Accept: "
                            + "application/vnd.tierlog.leased-batches`: lease strings in a header, the stored batches "
                            + "CRC-checked and walked with kafka-clients as a ShareFetch answer is; one acks entry per "
                            + "record)";
                    case JSON -> "JSON lease answers read by a streaming parser, one acks entry per record";
                },
                serviceFsync.tierlogSetting(),
                serviceFsync == Durability.ALWAYS ? " and fsynced, group-committed" : ", not fsynced");
        System.out.println("CPU columns: CPU seconds (user + system) per 100k records drained, medians: the server process "
                + "(Kafka's broker, Tierlog's index-service; /proc/<pid>/stat) and the benchmark JVM running the "
                + "consumers (its process CPU time).");
        System.out.println();
        System.out.println("| consumers | Kafka records/s: median (range) | Tierlog records/s: median (range) | Tierlog/Kafka "
                + "| records per poll (Kafka) / lease (Tierlog), median | server CPU s/100k: Kafka / Tierlog "
                + "| bench JVM CPU s/100k: Kafka / Tierlog |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (int n : consumers) {
            Samples k = new Samples(throughput.get("Kafka/" + n));
            Samples t = new Samples(throughput.get("Tierlog/" + n));
            System.out.printf(Locale.ROOT, "| %d | %s | %s | %.2fx | %.0f / %.0f | %.2f / %.2f | %.2f / %.2f |%n", n,
                    k.medianAndRange("%,.0f"), t.medianAndRange("%,.0f"), t.median() / k.median(),
                    new Samples(perPoll.get("Kafka/" + n)).median(), new Samples(perPoll.get("Tierlog/" + n)).median(),
                    new Samples(serverCpu.get("Kafka/" + n)).median(), new Samples(serverCpu.get("Tierlog/" + n)).median(),
                    new Samples(benchCpu.get("Kafka/" + n)).median(), new Samples(benchCpu.get("Tierlog/" + n)).median());
        }
        if (throughput.containsKey(KAFKA_PROTOCOL + "/" + consumers.get(0))) {
            System.out.println();
            System.out.println("KafkaShareConsumers (the same client and settings as the Kafka column) against the "
                    + "index-service's Kafka listener, on the same topic and share-group engine as the HTTP workers:");
            System.out.println();
            System.out.println("| consumers | Tierlog, Kafka protocol, records/s: median (range) | vs Kafka | vs Tierlog "
                    + "HTTP | records per poll, median | server CPU s/100k | bench JVM CPU s/100k |");
            System.out.println("|---|---|---|---|---|---|---|");
            for (int n : consumers) {
                Samples l = new Samples(throughput.get(KAFKA_PROTOCOL + "/" + n));
                System.out.printf(Locale.ROOT, "| %d | %s | %.2fx | %.2fx | %.0f | %.2f | %.2f |%n", n,
                        l.medianAndRange("%,.0f"), l.median() / new Samples(throughput.get("Kafka/" + n)).median(),
                        l.median() / new Samples(throughput.get("Tierlog/" + n)).median(),
                        new Samples(perPoll.get(KAFKA_PROTOCOL + "/" + n)).median(),
                        new Samples(serverCpu.get(KAFKA_PROTOCOL + "/" + n)).median(),
                        new Samples(benchCpu.get(KAFKA_PROTOCOL + "/" + n)).median());
            }
        }
        if (redeliveryTrials < 1) {
            return; // no trials, nothing to summarize
        }
        Samples k = new Samples(redelivery.get("Kafka"));
        Samples t = new Samples(redelivery.get("Tierlog"));
        System.out.printf(Locale.ROOT, "%nRedelivery after a consumer dies holding %d records (lease / acquisition lock "
                        + "%d ms on both: Tierlog `leaseMs`, Kafka group config `share.record.lock.duration.ms`); the "
                        + "slowest record per trial, %d trials each:%n%n", HELD, lockMs, k.count());
        System.out.println("| system | p50 ms | p99 ms | min–max ms |");
        System.out.println("|---|---|---|---|");
        System.out.printf(Locale.ROOT, "| Kafka | %,.0f | %,.0f | %,.0f–%,.0f |%n", k.percentile(50), k.percentile(99),
                k.min(), k.max());
        System.out.printf(Locale.ROOT, "| Tierlog | %,.0f | %,.0f | %,.0f–%,.0f |%n", t.percentile(50), t.percentile(99),
                t.min(), t.max());
    }
}
