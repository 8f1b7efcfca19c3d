package io.tierlog.client;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The packaged index-service ({@code -Dtierlog.app.jar}, built before this module in the reactor) in its own JVM on a
 * free 127.0.0.1 port, in token mode with a bootstrap token, fsync off, its data under {@code target/test-service}.
 * {@link #shared()} is one instance for every test class of the JVM (start-up is most of a test's cost), stopped by a
 * shutdown hook; {@link #start} makes a private one (the caller stops it). Used by the cli module's tests too.
 */
public final class TestService implements AutoCloseable {
    public static final String ADMIN_TOKEN = "test-bootstrap-" + UUID.randomUUID();
    private static TestService shared;

    private final Path work;
    private final int port;
    private final List<String> properties;
    private volatile Process process;

    private TestService(Path work, int port, List<String> properties) {
        this.work = work;
        this.port = port;
        this.properties = properties;
    }

    /** The JVM-wide instance, started on first use. */
    public static synchronized TestService shared() throws Exception {
        if (shared == null) {
            shared = start("shared");
            TestService s = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(s::close));
        }
        return shared;
    }

    /** A new instance under {@code target/test-service/<name>-<random>}; extra {@code -D} properties. */
    public static TestService start(String name, String... properties) throws Exception {
        Path work = Path.of("target", "test-service", name + "-" + UUID.randomUUID()).toAbsolutePath();
        Files.createDirectories(work);
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        TestService service = new TestService(work, port, List.of(properties));
        service.launch();
        service.awaitReady(Duration.ofSeconds(120));
        return service;
    }

    private void launch() throws IOException {
        String jar = System.getProperty("tierlog.app.jar", "../index-service/target/quarkus-app/quarkus-run.jar");
        if (!Files.exists(Path.of(jar))) {
            throw new IllegalStateException("no packaged index-service at " + jar + ": build it in the reactor "
                    + "(mvn -pl client -am verify)");
        }
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-Dquarkus.http.port=" + port, "-Dquarkus.http.host=127.0.0.1",
                "-Dtierlog.kafka.enabled=false",
                "-Dtierlog.data-dir=" + work.resolve("hot"), "-Dtierlog.index-dir=" + work.resolve("index"),
                "-Dtierlog.cold.filesystem.dir=" + work.resolve("cold"), "-Dtierlog.fsync=never",
                "-Dtierlog.auth.mode=token", "-Dtierlog.auth.bootstrap-token=" + ADMIN_TOKEN,
                "-Dtierlog.groups.max-clock-skew=100ms"));
        cmd.addAll(properties);
        cmd.addAll(List.of("-jar", jar));
        process = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve("service.log").toFile())).start();
    }

    /** Kills the process (SIGKILL: no shutdown, as a crash) and starts it again on the same port and data. */
    public void crashAndRestart() throws Exception {
        process.destroyForcibly().waitFor();
        launch();
    }

    /** Kills the process (SIGKILL). */
    public void kill() throws InterruptedException {
        process.destroyForcibly().waitFor();
    }

    /** Starts the killed process again on the same port and data, without waiting for it. */
    public void restart() throws IOException {
        launch();
    }

    public void awaitReady(Duration timeout) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IllegalStateException("service exited; log " + work.resolve("service.log"));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("service not ready in " + timeout + "; log " + work.resolve("service.log"));
            }
            try {
                HttpResponse<Void> r = http.send(HttpRequest.newBuilder(URI.create(url() + "/q/health/ready"))
                        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(100); // the process offers nothing to wait on but its port
        }
    }

    public String url() {
        return "http://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    public Path work() {
        return work;
    }

    /** A client with the bootstrap (admin) token. */
    public TierlogClient adminClient() {
        return TierlogClient.builder().url(url()).token(ADMIN_TOKEN).build();
    }

    /** A fresh topic name, so tests sharing the service do not meet. */
    public static String uniqueName(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Override
    public void close() {
        Process p = process;
        if (p != null) {
            p.destroy();
            try {
                if (!p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
