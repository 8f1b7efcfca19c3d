package io.tierlog.service.kafka;

import org.junit.jupiter.api.Assumptions;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The class path of Kafka's own tools and Connect runtime (4.4.0), for child processes: bench/kafka-broker's, which
 * depends on kafka-tools, resolved offline by Maven once. On the service's own test class path Kafka's broker jars
 * would meet Quarkus'.
 */
final class KafkaToolsClasspath {
    /**
     * Options for a tool's JVM, which lives seconds: compiled by C1 only and collected by one thread, it leaves the
     * second core to the service it talks to (as {@code PackagedService} does for the service's own processes).
     */
    static final List<String> SHORT_LIVED_JVM = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

    private KafkaToolsClasspath() {
    }

    static synchronized String get() throws Exception {
        Path pom = Path.of("..", "bench", "kafka-broker", "pom.xml").toAbsolutePath().normalize();
        Assumptions.assumeTrue(Files.exists(pom), "bench/kafka-broker is not beside index-service");
        Path out = Path.of("target", "kafka-tools.classpath").toAbsolutePath();
        if (!Files.exists(out) || Files.size(out) == 0) {
            Process mvn = new ProcessBuilder("mvn", "-B", "-o", "-q", "-f", pom.toString(),
                    "dependency:build-classpath", "-Dmdep.includeScope=runtime", "-Dmdep.outputFile=" + out)
                    .redirectErrorStream(true).start();
            String log = new String(mvn.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(mvn.waitFor(5, TimeUnit.MINUTES)).isTrue();
            assertThat(mvn.exitValue()).as("mvn dependency:build-classpath: %s", log).isZero();
        }
        String classpath = Files.readString(out).strip();
        assertThat(classpath).contains("kafka-tools-4.4.0.jar");
        return classpath;
    }

    /** Runs a tool's main class to its end (killed after 2 minutes), checking it exits 0; its standard output's lines. */
    static List<String> run(String stdin, String mainClass, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", get()));
        command.addAll(SHORT_LIVED_JVM);
        command.add(mainClass);
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        CompletableFuture.delayedExecutor(120, TimeUnit.SECONDS).execute(p::destroyForcibly);
        try (var in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).as("%s finished", mainClass).isTrue();
        assertThat(p.exitValue()).as("%s exit code; output:%n%s", mainClass, out).isZero();
        return out.lines().toList();
    }
}
