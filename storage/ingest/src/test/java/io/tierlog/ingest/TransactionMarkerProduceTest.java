package io.tierlog.ingest;

import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static io.tierlog.ingest.KafkaBatches.builder;
import static io.tierlog.ingest.KafkaBatches.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The Kafka produce path with transactions: a transactional producer's batches go through
 * {@link IngestService#produceTransactionalBatches} (and are refused by {@link IngestService#produceBatches}, the
 * path of edges without a coordinator), the coordinator's markers through {@link IngestService#appendMarker}, and
 * the partition's transactions read back through {@link HotLog#transactions}.
 */
class TransactionMarkerProduceTest {
    private static final String TOPIC = "orders";
    private static final long PID = 77;

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_800_000_000_000L);
    private IngestService service;

    @BeforeEach
    void start() {
        service = new IngestService(new IngestConfig(data, FsyncPolicy.ALWAYS, Duration.ofSeconds(1),
                IngestConfig.DEFAULT_MAX_REQUEST_BYTES), clock, 0);
        service.topics().create(TOPIC, 2, TopicConfig.DEFAULTS);
    }

    @AfterEach
    void stop() {
        service.close();
    }

    @Test
    void markersEndTransactionsOfTheProducePath() {
        TopicPartition tp = new TopicPartition(TOPIC, 1);
        service.produceTransactionalBatches(TOPIC, 1, values(txn(0), "a", "b"), () -> { });
        assertThat(new HotLog(data).transactions(tp).lastStableOffset(2)).isZero();

        long abort = service.appendMarker(tp, new TransactionMarker(PID, (short) 0, false, 4));
        service.produceTransactionalBatches(TOPIC, 1, values(txn(2), "c"), () -> { });
        long commit = service.appendMarker(tp, new TransactionMarker(PID, (short) 0, true, 4));

        assertThat(abort).isEqualTo(2);
        assertThat(commit).isEqualTo(4);
        assertThat(new HotLog(data).transactions(tp).lastStableOffset(5)).isEqualTo(5);
        assertThat(new HotLog(data).transactions(tp).aborted(0, 5)).containsExactly(new AbortedTransaction(PID, 0, 2));
        assertThat(service.activeProducers(TOPIC, 1)).singleElement()
                .satisfies(p -> assertThat(p.currentTxnStartOffset()).isEqualTo(-1));
    }

    @Test
    void aTransactionCheckThatRefusesAppendsNothingAndRunsUnderThePartitionLock() {
        TierlogException notInTransaction = new TierlogException(ErrorType.INVALID_TXN_STATE, "not in a transaction");
        Throwable refused = catchThrowable(() -> service.produceTransactionalBatches(TOPIC, 1, values(txn(0), "a"),
                () -> {
                    throw notInTransaction;
                }));
        assertThat(refused).isSameAs(notInTransaction);
        assertThat(service.produceBatches(TOPIC, 1, values("after")).baseOffset()).isZero();

        // The check runs holding the partition's lock: a marker (another thread) waits for the batch behind it.
        java.util.concurrent.CompletableFuture<Long> marker = new java.util.concurrent.CompletableFuture<>();
        service.produceTransactionalBatches(TOPIC, 1, values(txn(0), "t"), () -> {
            TransactionMarker commit = new TransactionMarker(PID, (short) 0, true, 4);
            Thread markerThread = new Thread(() -> marker.complete(
                    service.appendMarker(new TopicPartition(TOPIC, 1), commit)));
            markerThread.start();
            try {
                markerThread.join(200); // a marker that did not wait would be done well within this
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(marker.join()).as("after the batch, at 1").isEqualTo(2);
    }

    @Test
    void theProducePathOfEdgesWithoutACoordinatorRefusesTransactionalBatches() {
        Throwable refused = catchThrowable(() -> service.produceBatches(TOPIC, 0, values(txn(0), "a")));
        assertThat(refused).isInstanceOf(TierlogException.class).hasMessageContaining("transactional");
        assertThat(((TierlogException) refused).type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertThat(new HotLog(data).transactions(new TopicPartition(TOPIC, 0)).openTransactions()).isEmpty();
    }

    @Test
    void unknownTopicOrPartitionAndAFencedMarkerAreRefused() {
        TransactionMarker marker = new TransactionMarker(PID, (short) 0, true, 1);
        assertThat(refusal(
                () -> service.appendMarker(new TopicPartition("nope", 0), marker)).type())
                .isEqualTo(ErrorType.UNKNOWN_TOPIC);
        assertThat(refusal(
                () -> service.appendMarker(new TopicPartition(TOPIC, 2), marker)).type())
                .isEqualTo(ErrorType.UNKNOWN_PARTITION);

        service.appendMarker(new TopicPartition(TOPIC, 0), new TransactionMarker(PID, (short) 3, true, 1));
        assertThat(refusal(
                () -> service.appendMarker(new TopicPartition(TOPIC, 0), marker)).type())
                .isEqualTo(ErrorType.FENCED_PRODUCER);
    }

    private static org.apache.kafka.common.record.internal.MemoryRecordsBuilder txn(int sequence) {
        return builder(Compression.NONE, TimestampType.CREATE_TIME, PID, (short) 0, sequence, true);
    }

    /** The exception {@code call} throws, which must be a {@link TierlogException}. */
    private static TierlogException refusal(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        Throwable thrown = catchThrowable(call);
        assertThat(thrown).isInstanceOf(TierlogException.class);
        return (TierlogException) thrown;
    }
}
