package io.tierlog.bench.compare;

import io.tierlog.bench.client.ClientProduceCommand;
import io.tierlog.bench.auth.AuthCommand;
import io.tierlog.bench.cold.ColdCommand;
import io.tierlog.bench.compaction.CompactionCommand;
import io.tierlog.bench.cold.ColdInProcessCommand;
import io.tierlog.bench.groups.GroupsCommand;
import io.tierlog.bench.share.ShareCommand;
import io.tierlog.bench.lambda.LambdaCommand;
import io.tierlog.bench.scale.ScaleCommand;
import io.tierlog.bench.soak.SoakCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code java -jar bench/target/tierlog-bench.jar <benchmark> [options]}: the benchmarks as picocli subcommands.
 */
@Command(name = "tierlog-bench", mixinStandardHelpOptions = true,
        description = "Tierlog benchmarks.",
        subcommands = {CompareCommand.class, AuthCommand.class, GroupsCommand.class, ShareCommand.class, ColdCommand.class,
                ColdInProcessCommand.class, LambdaCommand.class, SoakCommand.class, ScaleCommand.class,
                ClientProduceCommand.class, CompactionCommand.class,
                io.tierlog.bench.compaction.StartupCommand.class,
                io.tierlog.bench.kafkaperf.KafkaPerfCommand.class,
                io.tierlog.bench.kafkaperf.KafkaFetchCommand.class})
public final class BenchCli implements Runnable {

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    public static void main(String[] args) {
        // The Kafka clients and S3Proxy log every connection at INFO; the benchmark's own progress goes to stderr.
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        // While the broker starts, the readiness probe's AdminClient warns on every refused connection.
        if (System.getProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient") == null) {
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient", "error");
        }
        System.exit(new CommandLine(new BenchCli()).execute(args));
    }
}
