package io.tierlog.bench.kafka;

import io.tierlog.bench.compare.ManagedProcess;
import io.tierlog.bench.compare.Ports;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A single-node Apache Kafka 4.4.0 broker in KRaft mode (combined broker + controller), run as a separate JVM
 * from the jars in {@code bench/target/kafka-libs} exactly as Maven Central ships them.
 *
 * <p>Start: writes {@code server.properties} into a fresh directory, runs {@code kafka.tools.StorageTool format
 * --cluster-id <random> --config server.properties --standalone} (a single-voter dynamic quorum, Kafka 4's way
 * for one node), then {@code kafka.Kafka server.properties}, and waits until an AdminClient sees the broker.
 * Listens on 127.0.0.1 only, on free ports. {@link #close()} stops it (also done by a shutdown hook).
 * The JVM options match Kafka's own {@code kafka-server-start.sh} (1 GiB heap, G1 with its pause target).
 */
public final class KafkaBroker implements AutoCloseable {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(180); // generous: a shared 2-core machine under load starts JVMs slowly

    private final ManagedProcess process;
    private final String bootstrapServers;

    private KafkaBroker(ManagedProcess process, String bootstrapServers) {
        this.process = process;
        this.bootstrapServers = bootstrapServers;
    }

    /**
     * Formats and starts a broker in {@code dir} (created if needed; its {@code logs} subdirectory holds the
     * data) with the broker JVM's class path from {@code libsDir}.
     */
    public static KafkaBroker start(Path libsDir, Path dir, Map<String, String> extraConfig) {
        return start(libsDir, dir, extraConfig, List.of());
    }

    /** As {@link #start(Path, Path, Map)}, with extra broker JVM options after the defaults (later ones win). */
    public static KafkaBroker start(Path libsDir, Path dir, Map<String, String> extraConfig, List<String> jvmOptions) {
        if (!Files.isRegularFile(libsDir.resolve("kafka_2.13-4.4.0.jar"))) {
            throw new IllegalStateException("Kafka broker jars missing in " + libsDir
                    + "; build them with: mvn -B -q -f bench/pom.xml package");
        }
        try {
            Files.createDirectories(dir);
            int port = Ports.freeLoopbackPort();
            int controllerPort = Ports.freeLoopbackPort();
            Path config = dir.resolve("server.properties");
            Properties props = serverProperties(dir.resolve("logs"), port, controllerPort);
            props.putAll(extraConfig);
            try (var out = Files.newBufferedWriter(config)) {
                props.store(out, "single-node KRaft broker for tierlog-bench");
            }
            String classPath = libsDir.toAbsolutePath() + "/*";
            ManagedProcess.run("kafka-storage-format",
                    java(classPath, "kafka.tools.StorageTool", "format", "--cluster-id", Uuid.randomUuid().toString(),
                            "--config", config.toString(), "--standalone"),
                    dir, dir.resolve("format.log"), Duration.ofSeconds(120));
            List<String> brokerCommand = java(classPath, "kafka.Kafka", config.toString());
            brokerCommand.addAll(brokerCommand.indexOf("-cp"), jvmOptions);
            ManagedProcess broker = ManagedProcess.start("kafka-broker", brokerCommand, dir, dir.resolve("broker.log"));
            String bootstrap = "127.0.0.1:" + port;
            try {
                awaitReady(broker, bootstrap);
            } catch (RuntimeException e) {
                broker.close();
                throw e;
            }
            return new KafkaBroker(broker, bootstrap);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare the Kafka broker in " + dir, e);
        }
    }

    static Properties serverProperties(Path logDir, int port, int controllerPort) {
        Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("node.id", "1");
        p.setProperty("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerPort);
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.setProperty("controller.listener.names", "CONTROLLER");
        p.setProperty("inter.broker.listener.name", "PLAINTEXT");
        p.setProperty("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT");
        p.setProperty("log.dirs", logDir.toAbsolutePath().toString());
        // A single node: every internal topic with one replica.
        p.setProperty("offsets.topic.replication.factor", "1");
        p.setProperty("transaction.state.log.replication.factor", "1");
        p.setProperty("transaction.state.log.min.isr", "1");
        p.setProperty("share.coordinator.state.topic.replication.factor", "1");
        p.setProperty("share.coordinator.state.topic.min.isr", "1");
        p.setProperty("group.initial.rebalance.delay.ms", "0");
        // Deleted topics free their disk soon instead of after Kafka's 60 s default, so runs do not overlap.
        p.setProperty("log.segment.delete.delay.ms", "1000");
        p.setProperty("file.delete.delay.ms", "1000");
        return p;
    }

    /**
     * The JVM options {@code kafka-run-class.sh} gives every Kafka JVM, broker and tools alike
     * ({@code KAFKA_JVM_PERFORMANCE_OPTS}; its {@code -XX:MaxInlineLevel=15} is JDK 17's default).
     */
    public static final List<String> KAFKA_JVM_PERFORMANCE_OPTS = List.of(
            "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
            "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true");

    private static List<String> java(String classPath, String mainClass, String... args) {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xms1g", "-Xmx1g"));
        cmd.addAll(KAFKA_JVM_PERFORMANCE_OPTS);
        cmd.addAll(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classPath, mainClass));
        cmd.addAll(List.of(args));
        return cmd;
    }

    private static void awaitReady(ManagedProcess broker, String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "3000");
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        try (Admin admin = Admin.create(props)) {
            while (true) {
                if (!broker.isAlive()) {
                    throw new IllegalStateException("Kafka broker exited during start; log "
                            + broker.logFile() + ":\n" + broker.logTail(40));
                }
                try {
                    if (!admin.describeCluster().nodes().get(3, TimeUnit.SECONDS).isEmpty()) {
                        return;
                    }
                } catch (Exception notYet) {
                    // broker still starting: retry until the deadline
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Kafka broker not ready within " + READY_TIMEOUT + "; log "
                            + broker.logFile() + ":\n" + broker.logTail(40));
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
            }
        }
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    public long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        process.close();
    }
}
