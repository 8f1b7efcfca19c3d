package io.tierlog.bench.compare;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A child JVM (or any program) the benchmark started: output goes to a log file, and the process is stopped by
 * {@link #close()} or, should the benchmark JVM exit first (Ctrl-C, an error), by a shutdown hook. So nothing it
 * starts outlives it, except after a {@code kill -9} of the benchmark itself.
 *
 * <p>Stop sends SIGTERM (both Kafka and Quarkus shut down cleanly on it), waits up to the grace period, then
 * kills the process and its descendants. Thread-safe.
 */
public final class ManagedProcess implements AutoCloseable {
    private static final Duration GRACE = Duration.ofSeconds(20);

    private final String name;
    private final Process process;
    private final Path logFile;
    private final Thread shutdownHook;

    private ManagedProcess(String name, Process process, Path logFile) {
        this.name = name;
        this.process = process;
        this.logFile = logFile;
        this.shutdownHook = new Thread(this::stop, "stop-" + name);
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** Starts {@code command} in {@code workDir}, stdout and stderr appended to {@code logFile}. */
    public static ManagedProcess start(String name, List<String> command, Path workDir, Path logFile) {
        return start(name, command, Map.of(), workDir, logFile);
    }

    /** As {@link #start(String, List, Path, Path)}, with {@code environment} added to this process's own. */
    public static ManagedProcess start(String name, List<String> command, Map<String, String> environment,
                                       Path workDir, Path logFile) {
        try {
            Files.createDirectories(logFile.getParent());
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(workDir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
            builder.environment().putAll(environment);
            Process p = builder.start();
            return new ManagedProcess(name, p, logFile);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + String.join(" ", command), e);
        }
    }

    /** Runs {@code command} to completion within {@code timeout}; fails with the log's tail on a non-zero exit. */
    public static void run(String name, List<String> command, Path workDir, Path logFile, Duration timeout) {
        try (ManagedProcess p = start(name, command, workDir, logFile)) {
            if (!p.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(name + " did not finish within " + timeout + "; log " + logFile
                        + ":\n" + p.logTail(40));
            }
            if (p.process.exitValue() != 0) {
                throw new IllegalStateException(name + " exited with " + p.process.exitValue() + "; log "
                        + logFile + ":\n" + p.logTail(40));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + name, e);
        }
    }

    /**
     * Waits until {@code GET url} answers 200 (e.g. a health endpoint), polling every 100 ms.
     *
     * @throws IllegalStateException with the log's tail if the process exits first or the deadline passes
     */
    public void awaitHttpOk(URI url, Duration timeout) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (!isAlive()) {
                throw new IllegalStateException(name + " exited during start; log " + logFile + ":\n" + logTail(40));
            }
            try {
                HttpResponse<Void> r = http.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet: retry until the deadline
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + name, e);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(name + " not ready within " + timeout + "; log " + logFile + ":\n"
                        + logTail(40));
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public Path logFile() {
        return logFile;
    }

    /** The last {@code lines} lines of the process log, for error messages. */
    public String logTail(int lines) {
        try {
            List<String> all = Files.readAllLines(logFile, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read " + logFile + ": " + e + ")";
        }
    }

    /** Stops the process (SIGTERM, then kill after the grace period). Idempotent. */
    public void stop() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // the hook is running or ran; nothing to remove
        }
    }
}
