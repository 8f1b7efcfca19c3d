package io.tierlog.service.transactions;

import io.quarkus.runtime.StartupEvent;
import io.tierlog.ingest.IngestService;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.groups.CommittedOffset;
import io.tierlog.service.groups.GroupOffsets;
import io.tierlog.transactions.PendingOffset;
import io.tierlog.transactions.TransactionConfig;
import io.tierlog.transactions.TransactionCoordinator;
import io.tierlog.transactions.TransactionParticipants;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Builds the {@link TransactionCoordinator} over the hot volume ({@code <data>/__transactions}, one locked state file
 * per transactional id, so every instance coordinates every transaction), with the engine as its participants:
 * markers are appended through {@link IngestService} like any record batch, and a committed transaction's group
 * offsets go to the consumer-offsets log as an OffsetCommit's do. Each instance also sweeps, every
 * {@code tierlog.kafka.transaction-check-interval}, for transactions past their timeout (aborted, their producer
 * fenced), for transactions a crashed instance left prepared (completed with the outcome it chose) and for
 * transactional ids idle past {@code tierlog.kafka.transactional-id-expiration} (forgotten).
 */
@Singleton
public class TransactionsSetup {
    private static final Logger LOG = Logger.getLogger(TransactionsSetup.class);
    /** Below this are HTTP clients' decimal producer ids ("1", "42"), which a random id should not meet. */
    private static final long FIRST_PRODUCER_ID = 1L << 40;
    private static final SecureRandom IDS = new SecureRandom();

    /** A fresh producer id: 63 random bits above HTTP's decimal ids, so instances hand them out uncoordinated. */
    public static long newProducerId() {
        long id;
        do {
            id = IDS.nextLong() & Long.MAX_VALUE;
        } while (id < FIRST_PRODUCER_ID);
        return id;
    }

    @Produces
    @Singleton
    TransactionCoordinator coordinator(TierlogConfig config, IngestService ingest, GroupOffsets offsets, Clock clock) {
        TransactionParticipants participants = new TransactionParticipants() {
            @Override
            public void writeMarkers(long producerId, short producerEpoch, boolean commit,
                                     Collection<TopicPartition> partitions) {
                for (TopicPartition tp : partitions) {
                    try {
                        ingest.appendMarker(tp, new TransactionMarker(producerId, producerEpoch, commit, 0));
                    } catch (TierlogException e) {
                        if (e.type() != ErrorType.UNKNOWN_TOPIC && e.type() != ErrorType.UNKNOWN_PARTITION) {
                            throw e;
                        }
                        // Deleted since it joined the transaction: nothing there to mark.
                    }
                }
            }

            @Override
            public void commitOffsets(String groupId, Map<TopicPartition, PendingOffset> pending) {
                List<CommittedOffset> entries = new ArrayList<>(pending.size());
                pending.forEach((tp, o) -> {
                    // A topic deleted (or shrunk) since: its offsets have nowhere to go. Failing here would leave the
                    // transaction prepared for good, its id refusing every request.
                    boolean exists = ingest.topics().find(tp.topic())
                            .filter(t -> tp.partition() < t.partitions()).isPresent();
                    if (exists) {
                        entries.add(new CommittedOffset(tp.topic(), tp.partition(), o.offset(), o.metadata()));
                    }
                });
                offsets.commit(groupId, entries);
            }
        };
        return new TransactionCoordinator(config.dataDir().resolve("__transactions"),
                FsyncPolicy.parse(config.fsync()) == FsyncPolicy.ALWAYS, clock, TransactionsSetup::newProducerId,
                participants, new TransactionConfig(config.kafka().transactionMaxTimeout(),
                config.kafka().transactionalIdExpiration()));
    }

    void start(@Observes StartupEvent event, ServiceThreads threads, TransactionCoordinator coordinator,
               TierlogConfig config) {
        long every = config.kafka().transactionCheckInterval().toMillis();
        threads.timers().scheduleWithFixedDelay(() -> threads.reads().execute(() -> sweep(coordinator)),
                every, every, TimeUnit.MILLISECONDS);
    }

    private static void sweep(TransactionCoordinator coordinator) {
        try {
            int completed = coordinator.completePrepared();
            int aborted = coordinator.abortTimedOut();
            int expired = coordinator.expireIdle();
            coordinator.reclaimReplaced();
            if (completed + aborted + expired > 0) {
                LOG.infof("transactions: %d left prepared completed, %d past their timeout aborted, %d idle ids "
                        + "expired", completed, aborted, expired);
            }
        } catch (RuntimeException e) {
            LOG.warnf(e, "transaction sweep failed; the next one retries");
        }
    }
}
