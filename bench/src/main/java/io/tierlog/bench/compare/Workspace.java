package io.tierlog.bench.compare;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** The checkout, work directories and progress log shared by the benchmark commands. */
public final class Workspace {
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss");

    private Workspace() {
    }

    /** The Tierlog checkout at or above the working directory. */
    public static Path findRepo() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("bench/pom.xml")) && Files.isDirectory(p.resolve("index-service"))) {
                return p;
            }
        }
        throw new IllegalStateException("cannot find the Tierlog checkout above " + dir + "; pass --repo");
    }

    /** {@code git describe --always --dirty} of the checkout, so a result names the code it measured. */
    public static String gitDescribe(Path root) {
        try {
            Process p = new ProcessBuilder("git", "-C", root.toString(), "describe", "--always", "--dirty")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : "unknown";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /**
     * Copies the built index-service ({@code index-service/target/quarkus-app}) into the work directory, so that
     * a rebuild during the benchmark cannot swap or delete jars under the running services. Returns the copy's
     * {@code quarkus-run.jar}.
     */
    public static Path copyApp(Path app, Path copy) throws IOException {
        try (Stream<Path> paths = Files.walk(app)) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                Path target = copy.resolve(app.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
        return copy.resolve("quarkus-run.jar");
    }

    /** Deletes a directory tree, logging what cannot be deleted; absent is fine. */
    public static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    log("cannot delete " + p + ": " + e.getMessage());
                }
            });
        } catch (IOException e) {
            log("cannot delete " + dir + ": " + e.getMessage());
        }
    }

    /** A progress line on stderr, stamped with the UTC time (stdout carries the report). */
    public static void log(String message) {
        System.err.println("[" + LocalTime.now(ZoneOffset.UTC).format(CLOCK) + "] " + message);
    }
}
