package io.tierlog.bench.compare;

import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * The {@code --kafka-libs} option (a picocli mixin) of the commands that start a Kafka 4.4.0 broker or its tools,
 * declared once so that its name, default and help are the same in all of them.
 */
public final class KafkaLibsOption {
    @Option(names = "--kafka-libs", defaultValue = "bench/target/kafka-libs",
            description = "Kafka 4.4.0's jars, broker and tools (default: ${DEFAULT-VALUE}).")
    Path kafkaLibs;

    /** The directory of Kafka's jars; relative paths are against the checkout. */
    public Path path() {
        return kafkaLibs;
    }
}
