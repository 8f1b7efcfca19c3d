package io.tierlog.bench.compare;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Tierlog's index-service from the build ({@code java -jar index-service/target/quarkus-app/quarkus-run.jar})
 * as a separate JVM on 127.0.0.1 and a free port, with its hot volume and index in {@code dir}, the given
 * fsync policy, and the cold tier in the embedded S3 bucket. Waits for {@code /q/health/ready}.
 * Same heap and collector as the Kafka broker (1 GiB, G1) so neither side wins on JVM settings.
 * Tiering and retention run every second so the cold-replay phase does not wait on 10 s / 30 s defaults.
 */
public final class TierlogService implements AutoCloseable {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(180); // generous: a shared 2-core machine under load starts JVMs slowly

    private final ManagedProcess process;
    private final URI baseUri;
    private final Durability durability;

    private TierlogService(ManagedProcess process, URI baseUri, Durability durability) {
        this.process = process;
        this.baseUri = baseUri;
        this.durability = durability;
    }

    public static TierlogService start(Path runJar, Path dir, Durability durability, EmbeddedS3 s3, String bucket)
            throws Exception {
        return start(runJar, dir, durability, s3, bucket, List.of());
    }

    /**
     * As {@link #start(Path, Path, Durability, EmbeddedS3, String)}, with more system properties for the service
     * ({@code -Dkey=value}, e.g. its auth mode) and the cold tier under the prefix {@code dir}'s name.
     */
    public static TierlogService start(Path runJar, Path dir, Durability durability, EmbeddedS3 s3, String bucket,
                                       List<String> serviceProperties) throws Exception {
        requireBuilt(runJar, " (or pass --skip-tierlog)");
        Files.createDirectories(dir);
        int port = Ports.freeLoopbackPort();
        List<String> cmd = jvmCommand(port, dir.resolve("hot"), dir.resolve("index"));
        cmd.addAll(List.of(
                "-Dtierlog.fsync=" + durability.tierlogFsync(),
                "-Dtierlog.tiering.interval=1s",
                "-Dtierlog.retention.check-interval=1s"));
        cmd.addAll(serviceProperties);
        String name = serviceProperties.isEmpty() ? durability.tierlogFsync() : dir.getFileName().toString();
        Started started = startWithS3Cold("tierlog-" + name, cmd, port, s3.endpoint(), bucket, name, runJar, dir,
                dir.resolve("index-service.log"));
        return new TierlogService(started.process(), started.baseUri(), durability);
    }

    /** A started index-service process and where it answers. */
    public record Started(ManagedProcess process, URI baseUri) {
    }

    /**
     * Completes {@code cmd} (from {@link #jvmCommand}, plus the caller's settings) with the S3 cold tier and the jar,
     * starts it and waits for {@code /q/health/ready}; a process that never gets ready is stopped.
     */
    public static Started startWithS3Cold(String name, List<String> cmd, int port, URI s3Endpoint, String bucket,
                                          String prefix, Path runJar, Path workDir, Path logFile) {
        cmd.addAll(List.of(
                "-Dtierlog.cold.s3.bucket=" + bucket,
                "-Dtierlog.cold.s3.prefix=" + prefix,
                "-Dtierlog.cold.store=s3"));
        cmd.addAll(EmbeddedS3.quarkusClientArgs(s3Endpoint));
        cmd.addAll(List.of("-jar", runJar.toAbsolutePath().toString()));
        ManagedProcess process = ManagedProcess.start(name, cmd, DEPLOYED_ENVIRONMENT, workDir, logFile);
        URI base = URI.create("http://127.0.0.1:" + port);
        try {
            process.awaitHttpOk(base.resolve("/q/health/ready"), READY_TIMEOUT);
        } catch (RuntimeException e) {
            process.close();
            throw e;
        }
        return new Started(process, base);
    }

    /** Fails with how to build it when the packaged index-service is missing; {@code hint} is appended. */
    public static void requireBuilt(Path runJar, String hint) {
        if (!Files.isRegularFile(runJar)) {
            throw new IllegalStateException("Tierlog index-service not built: " + runJar + " is missing; build it with "
                    + "`mvn -B -q -pl index-service -am install -DskipTests`" + hint);
        }
    }

    /**
     * The start of every benchmark's index-service command line: the JVM (1 GiB heap, G1 with short pauses), the
     * loopback port, warnings-only logging and the two directories. The caller appends its settings and the jar.
     */
    public static List<String> jvmCommand(int port, Path hotDir, Path indexDir) {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20"));
        // Extra JVM options for the service only (e.g. a JFR recording); JAVA_TOOL_OPTIONS would reach every JVM.
        String extra = System.getenv(SERVICE_JAVA_OPTS);
        if (extra != null && !extra.isBlank()) {
            cmd.addAll(List.of(extra.trim().split("\\s+")));
        }
        cmd.addAll(List.of(
                "-Dquarkus.http.host=127.0.0.1",
                "-Dquarkus.http.port=" + port,
                // The HTTP benchmarks need no Kafka listener, and its default port is the Kafka broker's beside it.
                "-Dtierlog.kafka.enabled=false",
                "-Dquarkus.log.level=WARN",
                "-Dtierlog.data-dir=" + hotDir.toAbsolutePath(),
                "-Dtierlog.index-dir=" + indexDir.toAbsolutePath()));
        return cmd;
    }

    /**
     * What the service's container image sets in its environment (index-service/src/main/docker/Dockerfile.jvm), so
     * the benchmarks measure the service as deployed: two glibc malloc arenas, not 8 per core.
     */
    public static final Map<String, String> DEPLOYED_ENVIRONMENT = Map.of("MALLOC_ARENA_MAX", "2");

    /** Environment variable with extra JVM options for the index-service processes the benchmarks start. */
    public static final String SERVICE_JAVA_OPTS = "TIERLOG_BENCH_SERVICE_JAVA_OPTS";

    public URI baseUri() {
        return baseUri;
    }

    public Durability durability() {
        return durability;
    }

    public long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        process.close();
    }
}
