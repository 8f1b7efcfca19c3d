package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;

import java.nio.file.Path;
import java.time.Clock;
import java.util.List;

/**
 * One of two service instances in their own JVMs (so only the file lock keeps them apart) driving one producer of
 * one transactional id: each round adds its own partition {@code <topic>-<round>} and ends the transaction with a
 * commit. Whichever process commits first commits the other's partition too; the other's EndTxn finds it complete.
 * Args: state dir, participants file, producer id, epoch, topic, rounds.
 */
public final class RaceMain {
    private RaceMain() {
    }

    public static void main(String[] args) {
        long producerId = Long.parseLong(args[2]);
        short epoch = Short.parseShort(args[3]);
        TransactionCoordinator coordinator = new TransactionCoordinator(Path.of(args[0]), false, Clock.systemUTC(),
                () -> { throw new IllegalStateException("no new producer ids here"); },
                new FileParticipants(Path.of(args[1])), TransactionConfig.DEFAULTS);
        for (int round = 0; round < Integer.parseInt(args[5]); round++) {
            TxnError added = coordinator.addPartitions("tx", producerId, epoch, List.of(new TopicPartition(args[4], round)));
            TxnError ended = coordinator.endTxn("tx", producerId, epoch, true);
            if (added != TxnError.NONE || ended != TxnError.NONE) {
                throw new IllegalStateException("round " + round + ": add " + added + ", end " + ended);
            }
        }
    }
}
