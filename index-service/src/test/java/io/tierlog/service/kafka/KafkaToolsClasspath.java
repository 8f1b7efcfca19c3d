package io.tierlog.service.kafka;

import org.junit.jupiter.api.Assumptions;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The class path of Kafka's own tools and Connect runtime (4.4.0), for child processes: bench/kafka-broker's, which
 * depends on kafka-tools, resolved offline by Maven once. On the service's own test class path Kafka's broker jars
 * would meet Quarkus'.
 */
final class KafkaToolsClasspath {
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
}
