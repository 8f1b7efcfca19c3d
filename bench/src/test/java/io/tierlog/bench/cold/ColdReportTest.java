package io.tierlog.bench.cold;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ColdReportTest {
    private static final long HALF_GIB = 1L << 29;

    @Test
    void cpuPerGibIsReportedForTheMedianReplayOfEachReader() throws Exception {
        ColdResults results = new ColdResults();
        // Three stream replays of half a GiB; the median by time (2 s) used 1.5 s in the service and 2 s here.
        results.add(0, ColdResults.Reader.BATCH_STREAM, replay(3, 1.0, 1.0));
        results.add(0, ColdResults.Reader.BATCH_STREAM, replay(2, 1.5, 2.0));
        results.add(0, ColdResults.Reader.BATCH_STREAM, replay(1, 9.0, 9.0));
        results.add(0, ColdResults.Reader.RAW, replay(1, 0.0, 1.25));

        ColdReport report = new ColdReport(results, Map.of("nproc", "2"),
                Map.of("git", "abc", "runs", 3, "warmupMib", 640, "warmUp", "quiet"), "now");

        assertThat(report.markdown())
                .contains("| 0 ms | binary stream, record batches (index-service) | 3.0 | 4.0 | 7.0 |")
                .contains("| 0 ms | raw ranged GETs, read-ahead's concurrency | 0.0 | 2.5 | 2.5 |");
        assertThat(report.json()).contains("\"serviceCpuSeconds\" : 1.5", "\"benchmarkJvmCpuSeconds\" : 2.0");
    }

    private static Replay replay(long seconds, double serviceCpu, double benchmarkCpu) {
        return new Replay(seconds * 1_000_000_000L, 1_000_000, 0, 0, HALF_GIB)
                .withCpu(new Replay.Cpu(serviceCpu, benchmarkCpu));
    }
}
