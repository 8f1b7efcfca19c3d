package io.tierlog.bench.cold;

import picocli.CommandLine.Option;

import java.util.List;

/** How often and at which injected S3 latencies the cold replay benchmarks run (a picocli mixin). */
final class ReplayRuns {
    @Option(names = "--runs", defaultValue = "3", description = "Runs per reader and latency; medians are reported (default: ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--latency-ms", split = ",", defaultValue = "0,20",
            description = "First-byte latencies injected per S3 response, ms (default: ${DEFAULT-VALUE}).")
    List<Integer> latenciesMs;
}
