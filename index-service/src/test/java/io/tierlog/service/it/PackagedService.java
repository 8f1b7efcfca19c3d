package io.tierlog.service.it;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaged index-service ({@code target/quarkus-app/quarkus-run.jar}, or the jar named by
 * {@code -Dtierlog.app.jar}) in its own JVM on a free 127.0.0.1 port, as the ITs run it: C1 only and the serial GC
 * (an IT's run is mostly start-up, on a shared 2-core machine), the index and the cold store under the work
 * directory, {@code tierlog.fsync=never}, output in {@code <work>/service.log}. The caller stops the process.
 */
public final class PackagedService {
    private static final int LOG_TAIL_LINES = 40;

    private final List<String> command;
    private final int port;
    private final Path log;
    private Process process;
    private boolean restarted;

    private PackagedService(List<String> command, int port, Path log) throws IOException {
        this.command = command;
        this.port = port;
        this.log = log;
        this.process = launch();
    }

    /**
     * Starts the service with its hot volume at {@code dataDir}; {@code properties} are extra {@code -D} flags, and
     * override the defaults above (the JVM takes the last of a repeated {@code -D}).
     */
    public static PackagedService start(Path work, Path dataDir, String... properties) throws IOException {
        int port = freePort();
        String jar = System.getProperty("tierlog.app.jar", "target/quarkus-app/quarkus-run.jar");
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-Dquarkus.http.port=" + port, "-Dquarkus.http.host=127.0.0.1",
                "-Dtierlog.kafka.port=0", "-Dtierlog.kafka.host=127.0.0.1",
                "-Dtierlog.data-dir=" + dataDir, "-Dtierlog.index-dir=" + work.resolve("index"),
                "-Dtierlog.cold.filesystem.dir=" + work.resolve("cold"), "-Dtierlog.fsync=never"));
        cmd.addAll(List.of(properties));
        cmd.addAll(List.of("-jar", jar));
        Files.createDirectories(work);
        return new PackagedService(List.copyOf(cmd), port, work.resolve("service.log"));
    }

    /**
     * A port free on the loopback now, for a service to bind in a moment, taken below the kernel's ephemeral range
     * (32768-60999 on Linux): a port the kernel hands out (a {@code ServerSocket(0)}) can meanwhile become the local
     * port of any outgoing connection, and a fresh-clone CI run lost a service's start to "Address already in use" so.
     */
    public static int freePort() throws IOException {
        for (int attempt = 0; ; attempt++) {
            int candidate = 20_000 + java.util.concurrent.ThreadLocalRandom.current().nextInt(12_000);
            try (ServerSocket s = new ServerSocket(candidate, 1, InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException taken) {
                if (attempt == 100) {
                    throw taken;
                }
            }
        }
    }

    private Process launch() throws IOException {
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    public Process process() {
        return process;
    }

    public int port() {
        return port;
    }

    public Path log() {
        return log;
    }

    /**
     * Waits until {@code /q/health/ready} answers 200; fails if the process exits or the deadline passes, with its exit
     * code and the end of its log in the message. A process that a signal ended before it was ready (exit code above
     * 128: nothing in these tests signals a service it has not seen ready) is started once more on the same port, its
     * first log kept as {@code service.log.1}: two fresh-clone CI runs lost a service that way within a second of its
     * start, and a crash of the service itself (exit code 1, an error in the log) still fails at once.
     */
    public void awaitReady(Duration timeout) throws Exception {
        awaitReady(timeout, Duration.ofMillis(200));
    }

    /** As {@link #awaitReady(Duration)}, asking every {@code pollEvery}: a test of readiness itself asks often. */
    public void awaitReady(Duration timeout, Duration pollEvery) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (!process.isAlive()) {
                int exit = process.waitFor();
                if (exit > 128 && !restarted) {
                    restarted = true;
                    Path first = log.resolveSibling(log.getFileName() + ".1");
                    Files.move(log, first, StandardCopyOption.REPLACE_EXISTING);
                    System.err.printf("service on port %d ended by signal %d before it was ready; starting it once more"
                            + " (first log: %s)%n%s%n", port, exit - 128, first, tail(first));
                    process = launch();
                    continue;
                }
                throw new AssertionError("service exited with code " + exit + " before it was ready; log " + log
                        + ", ending:\n" + tail(log));
            }
            assertThat(System.nanoTime()).as("service ready in time; log " + log + ", ending:\n" + tail(log))
                    .isLessThan(deadline);
            try {
                HttpResponse<Void> r = http.send(HttpRequest.newBuilder(URI.create(base() + "/q/health/ready"))
                        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(pollEvery.toMillis()); // the process offers nothing to wait on but its port
        }
    }

    private static String tail(Path file) throws IOException {
        List<String> lines = new String(Files.readAllBytes(file), java.nio.charset.StandardCharsets.UTF_8).lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
    }

    public String base() {
        return "http://127.0.0.1:" + port;
    }

    /** One request to the service: {@code body} (JSON) may be null; 30 s timeout. */
    public HttpResponse<String> send(HttpClient http, String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base() + path)).timeout(Duration.ofSeconds(30));
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Deletes an IT's work directory from an earlier run; absent is fine. */
    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
