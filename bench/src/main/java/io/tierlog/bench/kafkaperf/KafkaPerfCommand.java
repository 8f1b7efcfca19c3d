package io.tierlog.bench.kafkaperf;

import io.tierlog.bench.compare.BenchRun;
import io.tierlog.bench.compare.Durability;
import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.JitWarmup;
import io.tierlog.bench.compare.KafkaLibsOption;
import io.tierlog.bench.compare.LoadSampler;
import io.tierlog.bench.compare.MachineInfo;
import io.tierlog.bench.compare.NoDocsOption;
import io.tierlog.bench.compare.PackagedServiceOption;
import io.tierlog.bench.compare.Ports;
import io.tierlog.bench.compare.ProcessCpu;
import io.tierlog.bench.compare.TierlogService;
import io.tierlog.bench.compare.Workspace;
import io.tierlog.bench.docs.GeneratedSection;
import io.tierlog.bench.kafka.KafkaBroker;
import io.tierlog.bench.kafkaperf.PerfTools.ConsumerResult;
import io.tierlog.bench.kafkaperf.PerfTools.ProducerResult;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * {@code tierlog-bench kafka-perf}: Kafka's own ProducerPerformance and ConsumerPerformance (kafka-tools 4.4.0),
 * unchanged and with the same settings, against a Kafka 4.4.0 broker and against the index-service's Kafka listener,
 * in one run, at both durabilities (Kafka topic {@code flush.messages=1} against {@code tierlog.fsync=always}; page
 * cache against {@code never}). First every server is warmed, unmeasured, per durability: rounds that write and
 * consume {@link #WARM_UP_RECORDS} until its JVM's JIT is quiet ({@link JitWarmup}, the rule of {@code compare}), then
 * rounds that consume a measured run's records alone until it is quiet twice in a row; then each server JVM consumes
 * more rounds until it has as many as the JVM with the most (Kafka's one broker is warmed by both durabilities' rounds,
 * each service by its own). Then per durability and run:
 * each system gets a fresh topic, a producer run at full speed, one at full speed in transactions of
 * {@link #TRANSACTION_MS}, then a topic written in the same batches on both ({@link FullBatchWriter}) and
 * {@link #consumeRuns} consumer runs reading it back (each with its server's CPU and the consumer's fetch metrics
 * beside it, the other servers stopped meanwhile: {@link PausedServers}), then a producer run paced at half of that
 * system's own peak (the tool's {@code --throughput}), in an order that alternates from run to run, and both at half
 * of the slower peak of the run (latency at equal load). The
 * report gives medians and Tierlog/Kafka ratios; the tools' raw summary lines go into the results file.
 */
@Command(name = "kafka-perf", mixinStandardHelpOptions = true,
        description = "Kafka's ProducerPerformance/ConsumerPerformance against Kafka 4.4.0 and Tierlog's Kafka "
                + "listener, side by side, at both durabilities.")
public final class KafkaPerfCommand implements Callable<Integer> {
    static final GeneratedSection SECTION = new GeneratedSection("tierlog-kafka-perf", "kafka-perf",
            "## Kafka's perf tools against the Kafka listener (#23)", null);

    @Mixin
    PackagedServiceOption app;
    @Mixin
    KafkaLibsOption kafkaLibs;
    @Option(names = "--work-dir", defaultValue = "bench/target/kafka-perf",
            description = "Scratch directory (default: ${DEFAULT-VALUE}).")
    Path work;
    @Option(names = "--records", defaultValue = "500000", description = "Records per run (default: ${DEFAULT-VALUE}).")
    long records;
    @Option(names = "--record-size", defaultValue = "1024", description = "Value bytes (default: ${DEFAULT-VALUE}).")
    int recordSize;
    @Option(names = "--partitions", defaultValue = "8", description = "Partitions per topic (default: ${DEFAULT-VALUE}).")
    int partitions;
    @Option(names = "--runs", defaultValue = "3", description = "Runs per cell; medians reported (default: ${DEFAULT-VALUE}).")
    int runs;

    /**
     * A consume run's time follows its client JVM's CPU more than the server (1.6-2.7 s of ConsumerPerformance CPU for
     * the same records, 2026-12-03), so each run reads its topic several times for medians that resolve the servers.
     */
    @Option(names = "--consume-runs", defaultValue = "3",
            description = "ConsumerPerformance runs per server, durability and run, one after the other, each in a new "
                    + "group; medians over all (default: ${DEFAULT-VALUE}).")
    int consumeRuns;
    @Mixin
    NoDocsOption docs;

    /** The producer settings, the same for both servers: those of the compare command's Kafka producer. */
    static Map<String, String> producerProps() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("acks", "all");
        p.put("linger.ms", "5");
        p.put("batch.size", Integer.toString(512 * 1024));
        p.put("max.in.flight.requests.per.connection", "5");
        p.put("compression.type", "none");
        return p;
    }

    enum Server { KAFKA, TIERLOG }

    /**
     * How long each transaction of the transactional produce runs (ProducerPerformance's
     * {@code --transaction-duration-ms}): its commit then costs the markers of every partition it touched.
     */
    static final long TRANSACTION_MS = 100;

    /** Records each warm-up round writes and consumes, unmeasured, before the runs. */
    static final long WARM_UP_RECORDS = 100_000;
    /** No warm-up round starts after this long per server and durability. */
    static final java.time.Duration WARM_UP_LIMIT = java.time.Duration.ofSeconds(90);

    /** A server is settled below this much CPU (cores) over half a second, as in {@code compare}. */
    private static final double SETTLED_CORES = 0.15;
    private static final java.time.Duration SETTLE_WAIT = java.time.Duration.ofSeconds(20);

    /** Every run's results of one server at one durability. */
    static final class Cell {
        final List<ProducerResult> peak = new ArrayList<>();
        /** Each peak result's run, to pair the servers' runs. */
        final List<Integer> peakSlot = new ArrayList<>();
        /**
         * The server process's CPU over each peak run and the background work it left (until it settled), per 100k
         * records produced.
         */
        final List<ServerCpu> produceCpu = new ArrayList<>();
        /** ProducerPerformance's own CPU in each peak run, per 100k records produced. */
        final List<ServerCpu> producerCpu = new ArrayList<>();
        /** Full speed in transactions ({@link #TRANSACTION_MS} each), as the peak run otherwise. */
        final List<ProducerResult> transactional = new ArrayList<>();
        /** Each transactional result's run, to pair the servers' runs. */
        final List<Integer> transactionalSlot = new ArrayList<>();
        final List<ConsumerResult> consume = new ArrayList<>();
        /** Each consume result's slot in the run order ({@code run * consumeRuns + rep}), to pair the servers' runs. */
        final List<Integer> consumeSlot = new ArrayList<>();
        /** The server process's CPU during each consume run, per 100k records consumed (absent where /proc is not). */
        final List<ServerCpu> consumeCpu = new ArrayList<>();
        /** ConsumerPerformance's own CPU in each consume run, per 100k records consumed. */
        final List<ServerCpu> consumerCpu = new ArrayList<>();
        /** The batches of the topic each consume run read, on the server's disk. */
        final List<BatchLayout> consumeLayout = new ArrayList<>();
        /**
         * The server JVM's JIT compile time during each consume run, ms (NaN where jcmd could not tell): whether a
         * server was still compiling its fetch path while measured.
         */
        final List<Double> consumeJitMs = new ArrayList<>();
        final List<ProducerResult> paced = new ArrayList<>();
        final List<Long> pacedRate = new ArrayList<>();
        /** Paced at one rate for both servers (half of the slower peak of the run): latency at equal load. */
        final List<ProducerResult> samePaced = new ArrayList<>();
        final List<Long> samePacedRate = new ArrayList<>();
        /** The run whose peak is the last of {@link #peak} (-1: none yet). */
        int lastPeakRun = -1;
    }

    @Override
    public Integer call() throws Exception {
        BenchRun setup = BenchRun.prepare(work, app.path());
        Path repo = setup.repo();
        Path workDir = setup.workDir();
        Path libs = repo.resolve(kafkaLibs.path()).toAbsolutePath();
        PerfTools tools = new PerfTools(libs, Files.createDirectories(workDir.resolve("tools")));
        Map<Durability, Map<Server, Cell>> cells = new EnumMap<>(Durability.class);
        List<String> notes = new ArrayList<>();
        String loadSummary;
        String warmUp = "";
        String loadAtStart = MachineInfo.loadAverage();
        try (LoadSampler load = LoadSampler.start();
             EmbeddedS3 s3 = EmbeddedS3.start(workDir.resolve("s3"))) {
            s3.createBucket("bench");
            Workspace.log("starting Kafka 4.4.0 and two index-services (fsync always, never) with the Kafka listener");
            int alwaysPort = Ports.freeLoopbackPort();
            int neverPort = Ports.freeLoopbackPort();
            // Every measured run stops the servers not measured (ADR 0074, ADR 0080) for its length, up to 17 s seen
            // under heavy CPU steal: Kafka's default broker session (9 s) would fence its broker on the way back.
            try (KafkaBroker kafka = KafkaBroker.start(libs, workDir.resolve("kafka"),
                         Map.of("broker.session.timeout.ms", "30000"));
                 TierlogService always = TierlogService.start(setup.runJar(), workDir.resolve("always"),
                         Durability.ALWAYS, s3, "bench", kafkaListener(alwaysPort));
                 TierlogService never = TierlogService.start(setup.runJar(), workDir.resolve("never"),
                         Durability.NEVER, s3, "bench", kafkaListener(neverPort))) {
                Map<Durability, String> tierlogBootstrap = Map.of(Durability.ALWAYS, "127.0.0.1:" + alwaysPort,
                        Durability.NEVER, "127.0.0.1:" + neverPort);
                Map<Durability, Long> tierlogPid = Map.of(Durability.ALWAYS, always.pid(), Durability.NEVER, never.pid());
                List<Long> servers = List.of(kafka.pid(), always.pid(), never.pid());
                Path kafkaLogs = workDir.resolve("kafka").resolve("logs");
                Map<Durability, Path> tierlogLogs = Map.of(Durability.ALWAYS, workDir.resolve("always").resolve("hot"),
                        Durability.NEVER, workDir.resolve("never").resolve("hot"));
                // Kafka serves both durabilities from one broker JVM, Tierlog from two, each seeing half the load: a
                // fixed warm-up left Tierlog's services compiling their fetch path through the measured runs (service
                // CPU per 100k consumed fell from 0.11 s in the first run to 0.04-0.05 s in the fifth, 15:32 UTC run).
                long warm = Math.min(records, WARM_UP_RECORDS);
                List<String> warmUps = new ArrayList<>();
                // Each server JVM's consume rounds, and where to run more of them (its last warm-up topic).
                Map<Long, Integer> readRounds = new LinkedHashMap<>();
                Map<Long, String[]> readTopic = new LinkedHashMap<>();
                for (Durability d : Durability.values()) {
                    for (Server s : Server.values()) {
                        String bootstrap = s == Server.KAFKA ? kafka.bootstrapServers() : tierlogBootstrap.get(d);
                        String name = "warmup-" + s.name().toLowerCase(Locale.ROOT) + "-" + d.tierlogFsync();
                        long pid = s == Server.KAFKA ? kafka.pid() : tierlogPid.get(d);
                        try {
                            // One topic, appended to each round, so the warm-up adds no partitions to the passes.
                            createTopic(bootstrap, name, s, d);
                            int batchSize = Integer.parseInt(producerProps().get("batch.size"));
                            JitWarmup.Outcome written = JitWarmup.untilQuiet(List.of(pid), WARM_UP_LIMIT, round -> {
                                FullBatchWriter.write(bootstrap, name, partitions, warm, recordSize, batchSize);
                                tools.consume(name + "-" + round, bootstrap, name, warm, name + "-" + round);
                            });
                            // A write-and-consume round is mostly writing, so it can be quiet while the fetch path
                            // still compiles: then a measured run's whole consume, alone, until quiet twice in a row.
                            long held = written.rounds() * warm;
                            if (held < records) {
                                FullBatchWriter.write(bootstrap, name, partitions, records - held, recordSize,
                                        batchSize);
                            }
                            JitWarmup.Outcome read = JitWarmup.untilQuiet(List.of(pid), WARM_UP_LIMIT, 2, round ->
                                    tools.consume(name + "-read-" + round, bootstrap, name, records,
                                            name + "-read-" + round));
                            warmUps.add(s.name().toLowerCase(Locale.ROOT) + " " + d.tierlogFsync() + ": " + written
                                    + ", then consuming " + records + " records: " + read);
                            readRounds.merge(pid, read.rounds(), Integer::sum);
                            readTopic.put(pid, new String[]{bootstrap, name});
                        } catch (Exception e) {
                            notes.add(name + " failed: " + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
                            Workspace.log(name + " failed: " + e);
                        }
                    }
                }
                // Kafka's one broker JVM is warmed by both durabilities' rounds, each service by its own: every JVM
                // is topped up to the most consume rounds any of them had, so none is measured less warm.
                int most = readRounds.values().stream().mapToInt(Integer::intValue).max().orElse(0);
                List<String> topUps = new ArrayList<>();
                for (Map.Entry<Long, Integer> e : readRounds.entrySet()) {
                    String[] where = readTopic.get(e.getKey());
                    for (int round = e.getValue() + 1; round <= most; round++) {
                        tools.consume(where[1] + "-top-up-" + round, where[0], where[1], records,
                                where[1] + "-top-up-" + round);
                    }
                    if (e.getValue() < most) {
                        topUps.add(where[1] + " " + (most - e.getValue()));
                    }
                }
                warmUp = "Warm-up, unmeasured, rounds of " + warm + " records written and consumed until the server's "
                        + "JIT was quiet, then rounds consuming " + records + " of them until it was quiet in two "
                        + "rounds in a row: " + String.join("; ", warmUps) + "; then every server JVM topped up to "
                        + most + " consume rounds in all (Kafka's broker serves both durabilities)"
                        + (topUps.isEmpty() ? "" : ": " + String.join(", ", topUps) + " more") + ".";
                Workspace.log(warmUp);
                for (int run = 0; run < runs; run++) {
                    for (Durability d : Durability.values()) {
                        Map<Server, Cell> byServer = cells.computeIfAbsent(d, k -> new EnumMap<>(Server.class));
                        Map<Server, Long> pids = Map.of(Server.KAFKA, kafka.pid(), Server.TIERLOG, tierlogPid.get(d));
                        List<Server> order = run % 2 == 0 ? List.of(Server.KAFKA, Server.TIERLOG)
                                : List.of(Server.TIERLOG, Server.KAFKA);
                        for (Server s : order) {
                            String bootstrap = s == Server.KAFKA ? kafka.bootstrapServers() : tierlogBootstrap.get(d);
                            Cell cell = byServer.computeIfAbsent(s, k -> new Cell());
                            String name = s.name().toLowerCase(Locale.ROOT) + "-" + d.tierlogFsync() + "-" + run;
                            try {
                                long pid = pids.get(s);
                                createTopic(bootstrap, "peak-" + name, s, d);
                                ProducerResult peak = peakProduce(tools, cell, name, bootstrap, pid, servers, notes);
                                cell.lastPeakRun = run;
                                cell.peakSlot.add(run);
                                Workspace.log(name + " produce: " + peak.line() + (cell.produceCpu.isEmpty() ? ""
                                        : "; server CPU per 100k records " + cpuLine(cell.produceCpu.get(cell.produceCpu.size() - 1))
                                        + "; producer tool's " + cpuLine(cell.producerCpu.get(cell.producerCpu.size() - 1))));
                                createTopic(bootstrap, "txn-" + name, s, d);
                                ProducerResult txn = alone(pid, servers, () -> tools.produce("txn-" + name,
                                        bootstrap, "txn-" + name, records, recordSize, -1, producerProps(),
                                        List.of("--transactional-id", "perf-" + name, "--transaction-duration-ms",
                                                Long.toString(TRANSACTION_MS))));
                                cell.transactional.add(txn);
                                cell.transactionalSlot.add(run);
                                Workspace.log(name + " transactional produce: " + txn.line());
                                // The consume reads a topic of the same batches on both servers (ADR 0043).
                                String source = "full-" + name;
                                createTopic(bootstrap, source, s, d);
                                FullBatchWriter.write(bootstrap, source, partitions, records, recordSize,
                                        Integer.parseInt(producerProps().get("batch.size")));
                                Workspace.log(name + " consume source written");
                                BatchLayout layout = BatchLayout.of(s == Server.KAFKA ? kafkaLogs : tierlogLogs.get(d),
                                        source, partitions);
                                for (int rep = 0; rep < consumeRuns; rep++) {
                                    String consumeName = name + (consumeRuns > 1 ? "-" + rep : "");
                                    // The produce's background work (Kafka's flusher, Tierlog's indexer) is not
                                    // billed to the consume: both servers settle first, the same way.
                                    if (!ProcessCpu.awaitQuiet(List.of(pid), SETTLED_CORES, SETTLE_WAIT)) {
                                        notes.add(consumeName + ": server not settled before the consume run");
                                    }
                                    double jitBefore = JitWarmup.compileSecondsOrNaN(pid);
                                    ServerCpu before = ServerCpu.of(pid);
                                    ServerCpu toolBefore = ServerCpu.ofEndedChildren();
                                    ConsumerResult consumed = alone(pid, servers, () -> tools.consume(
                                            "consume-" + consumeName, bootstrap, source, records,
                                            "perf-" + consumeName));
                                    ServerCpu after = ServerCpu.of(pid);
                                    ServerCpu toolAfter = ServerCpu.ofEndedChildren();
                                    cell.consumeJitMs.add(1000 * (JitWarmup.compileSecondsOrNaN(pid) - jitBefore));
                                    cell.consume.add(consumed);
                                    cell.consumeSlot.add(run * consumeRuns + rep);
                                    cell.consumeLayout.add(layout);
                                    if (before != null && after != null && toolBefore != null && toolAfter != null) {
                                        cell.consumeCpu.add(after.per100k(before, consumed.records()));
                                        cell.consumerCpu.add(toolAfter.per100k(toolBefore, consumed.records()));
                                    }
                                    String cpu = cell.consumeCpu.isEmpty() ? "" : "; server CPU per 100k records "
                                            + cpuLine(cell.consumeCpu.get(cell.consumeCpu.size() - 1))
                                            + "; consumer tool's "
                                            + cpuLine(cell.consumerCpu.get(cell.consumerCpu.size() - 1));
                                    Workspace.log(consumeName + " consume: " + consumed.line().replace('\n', ' ') + "; "
                                            + consumed.fetch().line() + cpu + String.format("; server JIT %.0f ms",
                                            cell.consumeJitMs.get(cell.consumeJitMs.size() - 1)));
                                }
                            } catch (RuntimeException e) {
                                notes.add(name + " failed: " + e.getMessage().lines().findFirst().orElse(""));
                                Workspace.log(name + " failed: " + e);
                            }
                        }
                        for (Server s : order) {
                            String bootstrap = s == Server.KAFKA ? kafka.bootstrapServers() : tierlogBootstrap.get(d);
                            Cell cell = byServer.get(s);
                            if (cell.peak.size() <= cell.paced.size()) {
                                continue;
                            }
                            String name = s.name().toLowerCase(Locale.ROOT) + "-" + d.tierlogFsync() + "-" + run;
                            long rate = Math.max(1, Math.round(cell.peak.get(cell.peak.size() - 1).recordsPerSec() / 2));
                            // Paced runs last about as long as the peak run: half the records at half the rate.
                            long pacedRecords = Math.max(rate, records / 2);
                            long pid = pids.get(s);
                            try {
                                createTopic(bootstrap, "paced-" + name, s, d);
                                ProducerResult paced = alone(pid, servers, () -> tools.produce("paced-" + name,
                                        bootstrap, "paced-" + name, pacedRecords, recordSize, rate, producerProps()));
                                cell.paced.add(paced);
                                cell.pacedRate.add(rate);
                                Workspace.log(name + " paced at " + rate + "/s: " + paced.line());
                            } catch (RuntimeException e) {
                                notes.add(name + " paced failed: " + e.getMessage().lines().findFirst().orElse(""));
                                Workspace.log(name + " paced failed: " + e);
                            }
                        }
                        pacedAtOneRate(tools, order, byServer, run, d, kafka.bootstrapServers(),
                                tierlogBootstrap.get(d), pids, servers, notes);
                        // A run's topics are not read again: dropping them keeps --runs 9 (Tierlog's hot and cold
                        // copies included) under the hot tier's used-ratio limit, which refused the last run once.
                        for (Server s : order) {
                            deleteRunTopics(s == Server.KAFKA ? kafka.bootstrapServers() : tierlogBootstrap.get(d),
                                    s.name().toLowerCase(Locale.ROOT) + "-" + d.tierlogFsync() + "-" + run, notes);
                        }
                    }
                }
            }
            loadSummary = load.summary();
        }
        String stamp = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HHmmss'Z'").withZone(ZoneOffset.UTC)
                .format(setup.started());
        String table = table(cells);
        String when = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC).format(setup.started());
        String summary = "Run " + when + " UTC, `" + setup.git() + "`; " + records + " records of " + recordSize
                + " bytes, " + partitions + " partitions, " + runs + " run(s) per cell, " + consumeRuns
                + " consume run(s) in each (medians); " + loadSummary
                + " (`uptime` at the start: " + loadAtStart.trim() + "). Raw output: `bench/results/kafka-perf-"
                + stamp + ".md`. " + warmUp;
        String report = "# kafka-perf " + when + " UTC\n\n" + summary + "\n\nProducer settings (both servers): "
                + producerProps() + "\n\n" + table + "\n" + (notes.isEmpty() ? "" : "Notes:\n- "
                + String.join("\n- ", notes) + "\n\n") + "## Machine\n\n" + setup.machine() + "\n\n"
                + "## Raw tool summaries\n\n```\n" + raw(cells) + "```\n";
        Path results = repo.resolve("bench/results/kafka-perf-" + stamp + ".md");
        Files.writeString(results, report, StandardCharsets.UTF_8);
        // The servers' logs hold every run's topics (tens of GB for --runs 9): left behind, they filled the disk past
        // the hot tier's used-ratio limit and later test runs were refused (503 hot-tier-full).
        for (String dir : List.of("kafka", "always", "never", "s3")) {
            Workspace.deleteTree(workDir.resolve(dir));
        }
        System.out.println(report);
        Workspace.log("wrote " + repo.relativize(results));
        if (docs.updateDocs()) {
            SECTION.update(repo.resolve("docs/BENCHMARKS.md"), summary + "\n\n" + table
                    + (notes.isEmpty() ? "" : "\nNotes: " + String.join("; ", notes) + "\n"));
        }
        return notes.isEmpty() ? 0 : 1;
    }

    private static List<String> kafkaListener(int port) {
        return List.of("-Dtierlog.kafka.enabled=true", "-Dtierlog.kafka.port=" + port);
    }

    private void createTopic(String bootstrap, String topic, Server server, Durability d) throws RuntimeException {
        Map<String, String> config = new HashMap<>();
        if (server == Server.KAFKA) {
            config.put("segment.bytes", Integer.toString(1 << 30)); // Kafka's default, as in `compare`
            if (d == Durability.ALWAYS) {
                config.put("flush.messages", "1");
            }
        }
        createTopic(bootstrap, topic, partitions, config);
    }

    /** Deletes the topics of one server's run (named after {@code name}: peak, transactional, full, paced, same-rate). */
    private static void deleteRunTopics(String bootstrap, String name, List<String> notes) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            List<String> mine = admin.listTopics().names().get(60, TimeUnit.SECONDS).stream()
                    .filter(t -> t.equals("peak-" + name) || t.equals("full-" + name) || t.equals("paced-" + name)
                            || t.equals("same-" + name) || t.equals("txn-" + name))
                    .toList();
            admin.deleteTopics(mine).all().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            notes.add("deleting the topics of " + name + " failed: " + e);
        }
    }

    /** Creates {@code topic} and waits until every partition has a leader. */
    static void createTopic(String bootstrap, String topic, int partitions, Map<String, String> config) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(config)))
                    .all().get(60, TimeUnit.SECONDS);
            // Every partition led and answering ListOffsets, so the first produce does not race the creation.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                try {
                    var desc = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
                    if (desc.partitions().size() == partitions && desc.partitions().stream().allMatch(x -> x.leader() != null)) {
                        return;
                    }
                } catch (java.util.concurrent.ExecutionException notYet) {
                    // the broker has not caught up with the controller's metadata yet
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("topic " + topic + " not ready after 60 s");
                }
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("cannot create " + topic + " at " + bootstrap + ": " + e, e);
        }
    }

    /**
     * Each server paced at one rate, half of the slower of this run's two peaks: the own-peak rows compare each
     * server at its own half load, which differ when the peaks do; these compare latency at the same offered load.
     */
    private void pacedAtOneRate(PerfTools tools, List<Server> order, Map<Server, Cell> byServer, int run,
                                Durability d, String kafkaBootstrap, String tierlogBootstrap, Map<Server, Long> pids,
                                List<Long> servers, List<String> notes) {
        Cell k = byServer.get(Server.KAFKA);
        Cell t = byServer.get(Server.TIERLOG);
        if (k.lastPeakRun != run || t.lastPeakRun != run) {
            return; // a peak run failed: no common rate this run
        }
        double slower = Math.min(k.peak.get(k.peak.size() - 1).recordsPerSec(),
                t.peak.get(t.peak.size() - 1).recordsPerSec());
        long rate = Math.max(1, Math.round(slower / 2));
        long pacedRecords = Math.max(rate, records / 2);
        for (Server s : order) {
            String bootstrap = s == Server.KAFKA ? kafkaBootstrap : tierlogBootstrap;
            String name = "same-" + s.name().toLowerCase(Locale.ROOT) + "-" + d.tierlogFsync() + "-" + run;
            try {
                createTopic(bootstrap, name, s, d);
                ProducerResult paced = alone(pids.get(s), servers, () -> tools.produce(name, bootstrap, name,
                        pacedRecords, recordSize, rate, producerProps()));
                byServer.get(s).samePaced.add(paced);
                byServer.get(s).samePacedRate.add(rate);
                Workspace.log(name + " paced at " + rate + "/s: " + paced.line());
            } catch (RuntimeException e) {
                notes.add(name + " failed: " + e.getMessage().lines().findFirst().orElse(""));
                Workspace.log(name + " failed: " + e);
            }
        }
    }

    static String table(Map<Durability, Map<Server, Cell>> cells) {
        StringBuilder sb = new StringBuilder();
        sb.append("| durability | measure | Kafka 4.4.0 | Tierlog | Tierlog vs Kafka |\n|---|---|---|---|---|\n");
        for (var e : cells.entrySet()) {
            Cell k = e.getValue().get(Server.KAFKA);
            Cell t = e.getValue().get(Server.TIERLOG);
            if (k == null || t == null) {
                continue;
            }
            String d = e.getKey().label();
            row(sb, d, "produce records/s (ProducerPerformance)", k.peak, t.peak, ProducerResult::recordsPerSec, "%,.0f", true);
            pairedRow(sb, d, "produce records/s", k.peak, k.peakSlot, t.peak, t.peakSlot,
                    ProducerResult::recordsPerSec);
            row(sb, d, "produce MB/s (2^20 bytes)", k.peak, t.peak, ProducerResult::mibPerSec, "%.2f", true);
            row(sb, d, "produce p99 ms, full speed", k.peak, t.peak, r -> r.p99Ms(), "%.0f", false);
            row(sb, d, "produce: server CPU s per 100k records, user + system (its background work included)",
                    k.produceCpu, t.produceCpu, ServerCpu::totalSeconds, "%.3f", false);
            row(sb, d, "produce: ProducerPerformance's own CPU s per 100k records (its JVM's start included)",
                    k.producerCpu, t.producerCpu, ServerCpu::totalSeconds, "%.3f", false);
            row(sb, d, "transactional produce records/s (" + TRANSACTION_MS + " ms transactions)", k.transactional,
                    t.transactional, ProducerResult::recordsPerSec, "%,.0f", true);
            pairedRow(sb, d, "transactional produce records/s", k.transactional, k.transactionalSlot, t.transactional,
                    t.transactionalSlot, ProducerResult::recordsPerSec);
            row(sb, d, "transactional produce p99 ms", k.transactional, t.transactional, r -> r.p99Ms(), "%.0f", false);
            sb.append("| ").append(d).append(" | paced at half of own peak (records/s) | ")
                    .append(fmt("%,.0f", median(k.pacedRate, Long::doubleValue))).append(" | ")
                    .append(fmt("%,.0f", median(t.pacedRate, Long::doubleValue))).append(" | |\n");
            row(sb, d, "produce p99 ms at half of peak", k.paced, t.paced, r -> r.p99Ms(), "%.0f", false);
            sb.append("| ").append(d).append(" | both paced at half of the slower peak (records/s) | ")
                    .append(fmt("%,.0f", median(k.samePacedRate, Long::doubleValue))).append(" | ")
                    .append(fmt("%,.0f", median(t.samePacedRate, Long::doubleValue))).append(" | |\n");
            row(sb, d, "produce p99 ms, both at half of the slower peak", k.samePaced, t.samePaced, r -> r.p99Ms(),
                    "%.0f", false);
            row(sb, d, "consume records/s (ConsumerPerformance)", k.consume, t.consume, ConsumerResult::recordsPerSec, "%,.0f", true);
            row(sb, d, "consume MB/s (2^20 bytes)", k.consume, t.consume, ConsumerResult::mibPerSec, "%.2f", true);
            row(sb, d, "consume records/s after the group join (fetch.nMsg.sec)", k.consume, t.consume,
                    ConsumerResult::fetchRecordsPerSec, "%,.0f", true);
            pairedRow(sb, d, "consume records/s", k.consume, k.consumeSlot, t.consume, t.consumeSlot,
                    ConsumerResult::recordsPerSec);
            pairedRow(sb, d, "consume records/s after the group join", k.consume, k.consumeSlot, t.consume,
                    t.consumeSlot, ConsumerResult::fetchRecordsPerSec);
            row(sb, d, "consume: server CPU s per 100k records, user", k.consumeCpu, t.consumeCpu,
                    ServerCpu::userSeconds, "%.3f", false);
            row(sb, d, "consume: server CPU s per 100k records, system", k.consumeCpu, t.consumeCpu,
                    ServerCpu::systemSeconds, "%.3f", false);
            row(sb, d, "consume: server CPU s per 100k records, user + system", k.consumeCpu, t.consumeCpu,
                    ServerCpu::totalSeconds, "%.3f", false);
            row(sb, d, "consume: ConsumerPerformance's own CPU s per 100k records (its JVM's start included)",
                    k.consumerCpu, t.consumerCpu, ServerCpu::totalSeconds, "%.3f", false);
            row(sb, d, "consume: batches in the topic read (written the same way on both)", k.consumeLayout,
                    t.consumeLayout, l -> (double) l.batches(), "%,.0f", null);
            row(sb, d, "consume: fetch requests (consumer's fetch-total)", k.consume, t.consume,
                    r -> r.fetch().fetchTotal(), "%,.0f", null);
            row(sb, d, "consume: bytes per fetch (fetch-size-avg)", k.consume, t.consume,
                    r -> r.fetch().fetchSizeAvg(), "%,.0f", null);
            row(sb, d, "consume: records per fetch (records-per-request-avg)", k.consume, t.consume,
                    r -> r.fetch().recordsPerRequestAvg(), "%,.0f", null);
            row(sb, d, "consume: fetch latency ms (fetch-latency-avg)", k.consume, t.consume,
                    r -> r.fetch().fetchLatencyAvgMs(), "%.1f", false);
        }
        return sb.append("\nRatios: throughput Tierlog/Kafka, latency and CPU Kafka/Tierlog, so above 1.0x Tierlog does ")
                .append("better; fetch counts and sizes have none. Values are medians over the runs; the paired rows pair ")
                .append("the two servers' runs of the same slot in the run order (adjacent in time), and their interval ")
                .append("is the sign test's (order statistics). Each measured run has the other servers stopped. ")
                .append("Server CPU: the ")
                .append("server process's /proc utime and stime over the consume run, after it settled; over the produce ")
                .append("run and until the server settled after it.\n").toString();
    }

    /**
     * A throughput's ratios of runs paired in time (the same slot of the run order on both servers; a slot that failed
     * on either side has no pair): their median and its 95% interval ({@link PairedRatios}).
     */
    private static <T> void pairedRow(StringBuilder sb, String d, String what, List<T> kafka, List<Integer> kafkaSlots,
                                      List<T> tierlog, List<Integer> tierlogSlots, ToDoubleFunction<T> f) {
        List<T> k = new ArrayList<>();
        List<T> t = new ArrayList<>();
        for (int i = 0; i < kafka.size(); i++) {
            int j = i < kafkaSlots.size() ? tierlogSlots.indexOf(kafkaSlots.get(i)) : -1;
            if (j >= 0) {
                k.add(kafka.get(i));
                t.add(tierlog.get(j));
            }
        }
        PairedRatios p = PairedRatios.of(k, t, f, true);
        sb.append("| ").append(d).append(" | ").append(what)
                .append(", Tierlog/Kafka of runs paired in time: median (95% interval of the median) | | | ")
                .append(p == null ? "–" : p.describe()).append(" |\n");
    }

    /** @param higherIsBetter null: a figure to compare, not a score (no ratio) */
    private static <T> void row(StringBuilder sb, String d, String what, List<T> kafka, List<T> tierlog,
                                ToDoubleFunction<T> f, String format, Boolean higherIsBetter) {
        double k = median(kafka, f);
        double t = median(tierlog, f);
        String ratio = higherIsBetter == null ? "" : Double.isNaN(k) || Double.isNaN(t) || k == 0 || t == 0 ? "–"
                : String.format(Locale.ROOT, "%.2fx", higherIsBetter ? t / k : k / t);
        sb.append("| ").append(d).append(" | ").append(what).append(" | ").append(fmt(format, k)).append(" | ")
                .append(fmt(format, t)).append(" | ").append(ratio).append(" |\n");
    }

    /**
     * ProducerPerformance at full speed into {@code peak-<name>}, with the server's CPU over the run and the background
     * work it leaves (Tierlog's indexer and tierer, Kafka's flusher): both servers settle before and after the reading.
     */
    private ProducerResult peakProduce(PerfTools tools, Cell cell, String name, String bootstrap, long pid,
                                       List<Long> servers, List<String> notes) {
        if (!ProcessCpu.awaitQuiet(List.of(pid), SETTLED_CORES, SETTLE_WAIT)) {
            notes.add(name + ": server not settled before the produce run");
        }
        ServerCpu before = ServerCpu.of(pid);
        ServerCpu toolBefore = ServerCpu.ofEndedChildren();
        ProducerResult peak = alone(pid, servers, () -> tools.produce("produce-" + name, bootstrap, "peak-" + name,
                records, recordSize, -1, producerProps()));
        ServerCpu toolAfter = ServerCpu.ofEndedChildren();
        ProcessCpu.awaitQuiet(List.of(pid), SETTLED_CORES, SETTLE_WAIT);
        ServerCpu after = ServerCpu.of(pid);
        cell.peak.add(peak);
        if (before != null && after != null && toolBefore != null && toolAfter != null) {
            cell.produceCpu.add(after.per100k(before, records));
            cell.producerCpu.add(toolAfter.per100k(toolBefore, records));
        }
        return peak;
    }

    /**
     * Runs one measured tool run with every server of {@code servers} but {@code pid} stopped (ADR 0074, ADR 0080):
     * the servers' idle work differs and belongs to no other server's row.
     */
    private static <T> T alone(long pid, List<Long> servers, Supplier<T> run) {
        try (PausedServers others = PausedServers.allBut(pid, servers)) {
            return run.get();
        }
    }

    private static String fmt(String format, double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, format, v);
    }

    private static String cpuLine(ServerCpu c) {
        return String.format(Locale.ROOT, "user %.3f s, system %.3f s", c.userSeconds(), c.systemSeconds());
    }

    static <T> double median(List<T> values, ToDoubleFunction<T> f) {
        double[] v = values.stream().mapToDouble(f).filter(x -> !Double.isNaN(x)).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String raw(Map<Durability, Map<Server, Cell>> cells) {
        StringBuilder sb = new StringBuilder();
        cells.forEach((d, byServer) -> byServer.forEach((s, c) -> {
            String tag = s + " " + d.tierlogFsync();
            for (int i = 0; i < c.peak.size(); i++) {
                sb.append(tag).append(" produce: ").append(c.peak.get(i).line());
                if (i < c.produceCpu.size()) {
                    sb.append("; server CPU per 100k records ").append(cpuLine(c.produceCpu.get(i)))
                            .append("; producer tool's ").append(cpuLine(c.producerCpu.get(i)));
                }
                sb.append('\n');
            }
            c.transactional.forEach(r -> sb.append(tag).append(" transactional produce: ").append(r.line()).append('\n'));
            for (int i = 0; i < c.paced.size(); i++) {
                sb.append(tag).append(" paced ").append(c.pacedRate.get(i)).append("/s: ").append(c.paced.get(i).line()).append('\n');
            }
            for (int i = 0; i < c.samePaced.size(); i++) {
                sb.append(tag).append(" paced, both at ").append(c.samePacedRate.get(i)).append("/s: ")
                        .append(c.samePaced.get(i).line()).append('\n');
            }
            for (int i = 0; i < c.consume.size(); i++) {
                ConsumerResult r = c.consume.get(i);
                sb.append(tag).append(" consume:\n").append(r.line()).append('\n').append(r.fetch().line());
                if (i < c.consumeLayout.size()) {
                    sb.append("; ").append(c.consumeLayout.get(i).batches()).append(" batches, ")
                            .append(c.consumeLayout.get(i).records()).append(" records on disk");
                }
                if (i < c.consumeCpu.size()) {
                    sb.append("; server CPU per 100k records ").append(cpuLine(c.consumeCpu.get(i)))
                            .append("; consumer tool's ").append(cpuLine(c.consumerCpu.get(i)));
                }
                if (i < c.consumeJitMs.size()) {
                    sb.append(String.format("; server JIT %.0f ms", c.consumeJitMs.get(i)));
                }
                sb.append('\n');
            }
        }));
        return sb.toString();
    }
}
