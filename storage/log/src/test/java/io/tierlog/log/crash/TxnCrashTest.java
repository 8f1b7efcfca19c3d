package io.tierlog.log.crash;

import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionTransactions;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.Position;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.JavaProcess;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kills a writer of transactions ({@link TxnCrashWriterMain}) with SIGKILL at random moments, mid-batch, mid-marker
 * or between a marker and its index entry, restarting it each time. Afterwards the transaction index agrees with
 * the log: every transaction open in the log is open in the index (the index's LSO is never above the log's), every
 * abort in the log is listed, and the only extra entries are BEGINs whose batch never reached the log (killed in
 * between), which the coordinator's marker ends. Once every killed life's transaction is aborted, the LSO is the
 * high watermark. The seed is printed; rerun a failure with {@code -Dtierlog.crash.seed=<seed>}.
 */
@Tag("slow")
class TxnCrashTest {
    private static final int KILLS = 12;
    private static final long SEGMENT_BYTES = 64 * 1024;

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void killedTransactionalWriterLeavesAnIndexThatAgreesWithTheLog() throws Exception {
        long seed = Long.getLong("tierlog.crash.seed", System.nanoTime());
        System.out.println("TxnCrashTest seed = " + seed);
        Random random = new Random(seed);
        Path data = tmp.resolve("data");
        Path stderr = tmp.resolve("stderr.txt");
        TopicPartition tp = new TopicPartition("txn-crash", 0);

        for (int life = 0; life < KILLS; life++) {
            Process p = start(data, stderr, life, -1);
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                assertThat(out.readLine()).as("writer start (seed %d); stderr: %s", seed, stderrOf(stderr))
                        .startsWith("ready");
                assertThat(out.readLine()).as("first transaction (seed %d); stderr: %s", seed, stderrOf(stderr))
                        .startsWith("first-txn");
                Thread.sleep(random.nextInt(300));
            } finally {
                p.destroyForcibly();
            }
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as("killed by SIGKILL (seed %d); stderr: %s", seed, stderrOf(stderr))
                    .isEqualTo(128 + 9);
        }
        Process last = start(data, stderr, KILLS, 4);
        assertThat(last.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(last.exitValue()).as("final writer (seed %d); stderr: %s", seed, stderrOf(stderr)).isZero();

        HotLog hot = new HotLog(data);
        LogTransactions log = LogTransactions.of(hot, tp);
        PartitionTransactions index = hot.transactions(tp);
        assertAgrees(log, index, seed);
        assertThat(log.highWatermark).isGreaterThan(KILLS);

        // The coordinator aborts what the killed lives left open (and, harmlessly, what they had ended).
        try (PartitionWriter coordinator = hot.writer(tp, FsyncPolicy.NEVER, Duration.ZERO, Clock.systemUTC())) {
            for (int life = 0; life < KILLS; life++) {
                coordinator.appendMarker(new TransactionMarker(TxnCrashWriterMain.BASE_PRODUCER_ID + life, (short) 0,
                        false, 1), TopicConfig.DEFAULTS);
            }
        }
        LogTransactions ended = LogTransactions.of(hot, tp);
        assertAgrees(ended, index, seed);
        assertThat(ended.open).isEmpty();
        assertThat(index.openTransactions()).as("seed %d", seed).isEmpty();
        assertThat(index.lastStableOffset(ended.highWatermark)).isEqualTo(ended.highWatermark);
        System.out.printf("TxnCrashTest: %d kills, %d offsets, %d aborted in the log, %d in the index%n", KILLS,
                ended.highWatermark, ended.aborted.size(), index.aborted(0, Long.MAX_VALUE).size());
    }

    private static void assertAgrees(LogTransactions log, PartitionTransactions index, long seed) {
        Map<Long, Long> indexOpen = index.openTransactions();
        log.open.forEach((pid, first) -> assertThat(indexOpen.get(pid))
                .as("producer %d's transaction open since %d is open in the index (seed %d)", pid, first, seed)
                .isNotNull().isLessThanOrEqualTo(first));
        long logLso = log.open.values().stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE);
        assertThat(index.lastStableOffset(log.highWatermark)).as("seed %d", seed)
                .isLessThanOrEqualTo(Math.min(log.highWatermark, logLso));

        List<AbortedTransaction> indexed = index.aborted(0, Long.MAX_VALUE);
        for (AbortedTransaction a : log.aborted) {
            assertThat(indexed).as("abort %s of the log is indexed (seed %d)", a, seed)
                    .anyMatch(i -> i.producerId() == a.producerId() && i.lastOffset() == a.lastOffset()
                            && i.firstOffset() <= a.firstOffset());
        }
        for (AbortedTransaction i : indexed) {
            boolean inLog = log.aborted.stream()
                    .anyMatch(a -> a.producerId() == i.producerId() && a.lastOffset() == i.lastOffset());
            if (!inLog) {
                // A BEGIN whose batch never reached the log: the producer has no batch in its range.
                assertThat(log.dataBatches).as("extra abort %s only for a BEGIN without a batch (seed %d)", i, seed)
                        .noneMatch(b -> b.producerId() == i.producerId() && b.baseOffset() >= i.firstOffset()
                                && b.baseOffset() < i.lastOffset());
            }
        }
    }

    /** The transactions as the log itself says, batch by batch: what the index must agree with. */
    private static final class LogTransactions {
        final Map<Long, Long> open = new HashMap<>();
        final List<AbortedTransaction> aborted = new ArrayList<>();
        final List<BatchInfo> dataBatches = new ArrayList<>();
        long highWatermark;

        static LogTransactions of(HotLog hot, TopicPartition tp) {
            LogTransactions t = new LogTransactions();
            Position end = hot.reader(tp).scan(new Position(0, 0, 0), (info, batch) -> {
                if (info.control()) {
                    Long first = t.open.remove(info.producerId());
                    if (first != null && !TransactionMarker.read(batch).commit()) {
                        t.aborted.add(new AbortedTransaction(info.producerId(), first, info.baseOffset()));
                    }
                } else {
                    t.dataBatches.add(info);
                    if (info.transactional()) {
                        t.open.putIfAbsent(info.producerId(), info.baseOffset());
                    }
                }
                return true;
            });
            t.highWatermark = end.offset();
            return t;
        }
    }

    private Process start(Path data, Path stderr, int life, int transactions) {
        return JavaProcess.start(TxnCrashWriterMain.class, stderr, data.toString(), "txn-crash", String.valueOf(life),
                String.valueOf(SEGMENT_BYTES), String.valueOf(transactions));
    }

    private static String stderrOf(Path stderr) throws java.io.IOException {
        return Files.exists(stderr) ? Files.readString(stderr) : "";
    }
}
