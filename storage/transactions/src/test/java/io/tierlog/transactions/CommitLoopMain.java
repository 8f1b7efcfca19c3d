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
 * With a fifth argument {@code v2} it speaks transaction protocol 2 ({@link TransactionCoordinator#endTxnBumpingEpoch}),
 * continuing at the producer id and epoch each commit answers, from an epoch {@link #EPOCHS_BEFORE_ROTATION} commits
 * short of running out, so that commit {@code EPOCHS_BEFORE_ROTATION - 1} moves the id to a new producer id.
 * Args: state dir, participants file, audit file, hangAt[, v2].
 */
public final class CommitLoopMain {
    private CommitLoopMain() {
    }

    /** Protocol 2: commits until the epoch runs out (the last of them rotates the producer id). */
    static final int EPOCHS_BEFORE_ROTATION = 6;

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        TransactionCoordinator coordinator = new TransactionCoordinator(dir, false, Clock.systemUTC(), System::nanoTime,
                participants(new FileParticipants(Path.of(args[1])), Integer.parseInt(args[3])), TransactionConfig.DEFAULTS);
        Path audit = Path.of(args[2]);
        boolean v2 = args.length > 4 && args[4].equals("v2");
        InitResult p = coordinator.initProducerId("tx", 60_000, -1, (short) -1);
        check(p.error());
        long producerId = p.producerId();
        short epoch = p.producerEpoch();
        if (v2) {
            // As if this producer had run that many transactions already.
            epoch = (short) (Short.MAX_VALUE - EPOCHS_BEFORE_ROTATION);
            short start = epoch;
            new TransactionStore(dir, false).update("tx", txn -> {
                txn.write(txn.current().initialized(p.producerId(), start, TransactionMetadata.NO_PRODUCER_EPOCH, 60_000,
                        System.currentTimeMillis()));
                return null;
            });
        }
        for (int n = 0; n < 1_000_000; n++) {
            List<TopicPartition> tps = List.of(new TopicPartition("t", n), new TopicPartition("u", n));
            long id = v2 ? producerId : p.producerId();
            check(coordinator.addPartitions("tx", id, epoch, tps));
            check(coordinator.addOffsets("tx", id, epoch, "g"));
            check(coordinator.txnOffsetCommit("tx", "g", id, epoch,
                    Map.of(new TopicPartition("in", 0), new PendingOffset(n, "", 0))));
            if (v2) {
                EndTxnResult r = coordinator.endTxnBumpingEpoch("tx", id, epoch, true);
                check(r.error());
                producerId = r.producerId();
                epoch = r.producerEpoch();
            } else {
                check(coordinator.endTxn("tx", id, epoch, true));
            }
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
