package io.tierlog.bench.compare;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The option mixins shared by the bench commands: present, with the same defaults, in every command that uses them. */
class BenchCliOptionsTest {
    private final CommandLine cli = new CommandLine(new BenchCli());

    @Test
    void sharedOptionsHaveTheSameDefaultInEveryCommand() {
        for (String command : List.of("auth", "groups", "share", "client-produce", "kafka-perf", "kafka-fetch")) {
            assertThat(option(command, "--app").defaultValue()).as(command).isEqualTo("index-service/target/quarkus-app");
        }
        for (String command : List.of("groups", "share", "client-produce", "kafka-perf", "kafka-fetch")) {
            assertThat(option(command, "--kafka-libs").defaultValue()).as(command).isEqualTo("bench/target/kafka-libs");
        }
        for (String command : List.of("compare", "cold", "soak", "scale", "kafka-perf")) {
            assertThat(option(command, "--no-docs")).as(command).isNotNull();
        }
    }

    @Test
    void noDocsReachesRunOptionsThroughItsMixin() {
        CompareCommand compare = new CompareCommand();
        new CommandLine(compare).parseArgs("--no-docs", "--keep");
        assertThat(compare.run.updateDocs()).isFalse();

        CompareCommand defaults = new CompareCommand();
        new CommandLine(defaults).parseArgs();
        assertThat(defaults.run.updateDocs()).isTrue();
    }

    private OptionSpec option(String command, String name) {
        return cli.getSubcommands().get(command).getCommandSpec().findOption(name);
    }
}
