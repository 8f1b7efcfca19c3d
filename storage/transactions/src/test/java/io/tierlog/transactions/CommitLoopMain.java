package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * A service instance in its own JVM, to be killed with SIGKILL: commits transactions in a loop, transaction n on
 * partitions {@code t-n} and {@code u-n} with group {@code g}'s offset n, and appends {@code C <n>} to the audit file
 * after each acknowledged commit. With {@code hangAt} >= 0, the marker write of transaction {@code hangAt} blocks
 * after {@code t-n}'s marker, until the process is killed: a kill between two markers, for certain.
 * Args: state dir, participants file, audit file, hangAt.
 */
public final class CommitLoopMain {
    private CommitLoopMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        TransactionCoordinator coordinator = new TransactionCoordinator(dir, false, Clock.systemUTC(), System::nanoTime,
                participants(new FileParticipants(Path.of(args[1])), Integer.parseInt(args[3])), TransactionConfig.DEFAULTS);
        Path audit = Path.of(args[2]);
        InitResult p = coordinator.initProducerId("tx", 60_000, -1, (short) -1);
        check(p.error());
        for (int n = 0; n < 1_000_000; n++) {
            List<TopicPartition> tps = List.of(new TopicPartition("t", n), new TopicPartition("u", n));
            check(coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), tps));
            check(coordinator.addOffsets("tx", p.producerId(), p.producerEpoch(), "g"));
            check(coordinator.txnOffsetCommit("tx", "g", p.producerId(), p.producerEpoch(),
                    Map.of(new TopicPartition("in", 0), new PendingOffset(n, "", 0))));
            check(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), true));
            Files.writeString(audit, "C " + n + "\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        }
    }

    private static TransactionParticipants participants(FileParticipants files, int hangAt) {
        return new TransactionParticipants() {
            @Override
            public void writeMarkers(long producerId, short epoch, boolean commit, Collection<TopicPartition> partitions) {
                for (TopicPartition tp : partitions) {
                    if (tp.topic().equals("u") && tp.partition() == hangAt) {
                        awaitKill();
                    }
                    files.writeMarkers(producerId, epoch, commit, List.of(tp));
                }
            }

            @Override
            public void commitOffsets(String groupId, Map<TopicPartition, PendingOffset> offsets) {
                files.commitOffsets(groupId, offsets);
            }
        };
    }

    private static void awaitKill() {
        try {
            new CountDownLatch(1).await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void check(TxnError error) {
        if (error != TxnError.NONE) {
            throw new IllegalStateException("unexpected " + error);
        }
    }
}
