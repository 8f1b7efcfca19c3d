package io.tierlog.transactions;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * Kafka's transaction coordinator (KIP-98; transaction versions 1 and 2, the latter {@link #endTxnBumpingEpoch}) over
 * the hot volume: any instance may serve any request for any transactional id. See {@code package-info.java} for the
 * durability argument.
 *
 * <p>Where this differs from Kafka, only in how many round trips a client needs, never in the outcome: Kafka writes
 * markers asynchronously and answers CONCURRENT_TRANSACTIONS to a request that finds its id's transaction prepared,
 * leaving the client to retry; here markers are written inside the call that prepares the transaction, and a request
 * that finds it prepared (left so by a crash or a failed marker write) completes it first and then proceeds. Likewise
 * InitProducerId on an ongoing transaction aborts it with a fenced epoch and then bumps the epoch again in the same
 * call, returning what Kafka returns to the client's retry.
 */
public final class TransactionCoordinator {
    /**
     * The longest transactional id accepted, in UTF-8 bytes: Kafka's wire format (a 16-bit string length) allows
     * 32767 and sets no lower limit. The id only lives inside its state file (the file name is its hash), so Kafka's
     * limit costs nothing here, and any id a Kafka client can send works.
     */
    public static final int MAX_TRANSACTIONAL_ID_BYTES = Short.MAX_VALUE;

    private static final Logger LOG = LoggerFactory.getLogger(TransactionCoordinator.class);

    private final TransactionStore store;
    private final Clock clock;
    private final LongSupplier newProducerIds;
    private final TransactionParticipants participants;
    private final TransactionConfig config;

    public TransactionCoordinator(Path dir, boolean fsync, Clock clock, LongSupplier newProducerIds,
                                  TransactionParticipants participants, TransactionConfig config) {
        this.store = new TransactionStore(Objects.requireNonNull(dir, "dir"), fsync);
        this.clock = Objects.requireNonNull(clock, "clock");
        this.newProducerIds = Objects.requireNonNull(newProducerIds, "newProducerIds");
        this.participants = Objects.requireNonNull(participants, "participants");
        this.config = Objects.requireNonNull(config, "config");
    }

    /**
     * InitProducerId with a transactional id. {@code expectedProducerId}/{@code expectedEpoch} are KIP-360's (-1/-1:
     * none): a producer re-initializing after an abortable error proves it is the current one.
     */
    public InitResult initProducerId(String transactionalId, int transactionTimeoutMs, long expectedProducerId,
                                     short expectedEpoch) {
        if (!validId(transactionalId)) {
            return InitResult.failed(TxnError.INVALID_REQUEST);
        }
        if (transactionTimeoutMs <= 0 || transactionTimeoutMs > config.maxTimeout().toMillis()) {
            return InitResult.failed(TxnError.INVALID_TRANSACTION_TIMEOUT);
        }
        boolean noExpected = expectedProducerId == TransactionMetadata.NO_PRODUCER_ID
                && expectedEpoch == TransactionMetadata.NO_PRODUCER_EPOCH;
        if (!noExpected && (expectedProducerId == TransactionMetadata.NO_PRODUCER_ID
                || expectedEpoch == TransactionMetadata.NO_PRODUCER_EPOCH)) {
            return InitResult.failed(TxnError.INVALID_REQUEST); // as Kafka's KafkaApis: both or neither
        }
        return store.update(transactionalId, txn -> {
            TransactionMetadata m = txn.current();
            if (m == null) {
                // Not written until the transition below: a failed InitProducerId leaves no id behind.
                m = TransactionMetadata.created(transactionalId, newProducerIds.getAsLong(), transactionTimeoutMs, now());
            } else if (!completeIfPrepared(txn)) {
                return InitResult.failed(TxnError.CONCURRENT_TRANSACTIONS);
            } else {
                m = txn.current();
            }
            if (!noExpected && !isExpectedProducer(m, expectedProducerId, expectedEpoch)) {
                return InitResult.failed(TxnError.PRODUCER_FENCED);
            }
            if (m.state() == TxnState.ONGOING) {
                // Fence the current producer: abort its transaction at a bumped epoch, then bump again below.
                txn.write(m.fencedAbort(now()));
                if (!completeIfPrepared(txn)) {
                    return InitResult.failed(TxnError.CONCURRENT_TRANSACTIONS);
                }
                m = txn.current();
            }
            TransactionMetadata next;
            if (m.isProducerEpochExhausted() && (noExpected || expectedEpoch == m.producerEpoch())) {
                // Kafka's prepareProducerIdRotation: a new producer id at epoch 0; remember the old epoch for a retry.
                next = m.initialized(newProducerIds.getAsLong(), (short) 0,
                        noExpected ? TransactionMetadata.NO_PRODUCER_EPOCH : m.producerEpoch(), transactionTimeoutMs, now());
            } else if (noExpected) {
                next = m.initialized(m.producerId(), (short) (m.producerEpoch() + 1),
                        TransactionMetadata.NO_PRODUCER_EPOCH, transactionTimeoutMs, now());
            } else if (m.producerEpoch() == TransactionMetadata.NO_PRODUCER_EPOCH || expectedEpoch == m.producerEpoch()) {
                next = m.initialized(m.producerId(), (short) (m.producerEpoch() + 1), m.producerEpoch(),
                        transactionTimeoutMs, now());
            } else if (m.lastProducerEpoch() != TransactionMetadata.NO_PRODUCER_EPOCH
                    && expectedEpoch == m.lastProducerEpoch()) {
                // A retry of a bump whose answer was lost: the same epoch again, not a second bump.
                next = m.initialized(m.producerId(), m.producerEpoch(), m.lastProducerEpoch(), transactionTimeoutMs, now());
            } else {
                return InitResult.failed(TxnError.PRODUCER_FENCED);
            }
            txn.write(next);
            return new InitResult(TxnError.NONE, next.producerId(), next.producerEpoch());
        });
    }

    /** AddPartitionsToTxn: the partitions join the producer's transaction, starting one if none is ongoing. */
    public TxnError addPartitions(String transactionalId, long producerId, short producerEpoch,
                                  Collection<TopicPartition> partitions) {
        List<TopicPartition> added = List.copyOf(partitions);
        return add(transactionalId, producerId, producerEpoch, added, List.of());
    }

    /** AddOffsetsToTxn: the group's offsets may be committed in the transaction (Kafka adds its __consumer_offsets partition). */
    public TxnError addOffsets(String transactionalId, long producerId, short producerEpoch, String groupId) {
        Objects.requireNonNull(groupId, "groupId");
        return add(transactionalId, producerId, producerEpoch, List.of(), List.of(groupId));
    }

    private TxnError add(String transactionalId, long producerId, short producerEpoch,
                         List<TopicPartition> partitions, List<String> groups) {
        if (!validId(transactionalId)) {
            return TxnError.INVALID_REQUEST;
        }
        return store.update(transactionalId, txn -> {
            TxnError error = checkProducer(txn, producerId, producerEpoch);
            if (error != TxnError.NONE) {
                return error;
            }
            TransactionMetadata m = txn.current();
            if (m.state() == TxnState.ONGOING && m.partitions().containsAll(partitions) && m.groups().containsAll(groups)) {
                return TxnError.NONE; // Kafka's shortcut: nothing new, nothing written
            }
            txn.write(m.withAdded(partitions, groups, now()));
            return TxnError.NONE;
        });
    }

    /**
     * TxnOffsetCommit: offsets kept in the transaction, committed to the group only if it commits. The group must
     * have been added (AddOffsetsToTxn) to the ongoing transaction, else INVALID_TXN_STATE. Kafka's group coordinator
     * does not check this itself; its KIP-890 verification of the __consumer_offsets partition does, and current Kafka
     * answers TRANSACTION_ABORTABLE there (newer clients); INVALID_TXN_STATE is the transaction-version-1 answer.
     * Producer id and epoch are checked as AddOffsets checks them.
     */
    public TxnError txnOffsetCommit(String transactionalId, String groupId, long producerId, short producerEpoch,
                                    Map<TopicPartition, PendingOffset> offsets) {
        Objects.requireNonNull(groupId, "groupId");
        Map<TopicPartition, PendingOffset> copy = Map.copyOf(offsets);
        if (!validId(transactionalId)) {
            return TxnError.INVALID_REQUEST;
        }
        return store.update(transactionalId, txn -> {
            TxnError error = checkProducer(txn, producerId, producerEpoch);
            if (error != TxnError.NONE) {
                return error;
            }
            TransactionMetadata m = txn.current();
            if (m.state() != TxnState.ONGOING || !m.groups().contains(groupId)) {
                return TxnError.INVALID_TXN_STATE;
            }
            txn.write(m.withPendingOffsets(groupId, copy));
            return TxnError.NONE;
        });
    }

    /**
     * EndTxn: PrepareCommit/PrepareAbort written durably, then markers, then (commit only) the offsets, then
     * CompleteCommit/CompleteAbort. If a participant fails the transaction stays prepared (its outcome decided) and
     * the answer is CONCURRENT_TRANSACTIONS, retriable, which is also Kafka's answer to a retried EndTxn that finds
     * the same outcome still prepared; the retry, {@link #completePrepared} or any request for the id completes it.
     * (Kafka answers the first EndTxn NONE as soon as the prepared state is in its log and writes markers after;
     * here NONE waits for the markers, so it also means they are written.)
     */
    public TxnError endTxn(String transactionalId, long producerId, short producerEpoch, boolean commit) {
        if (!validId(transactionalId)) {
            return TxnError.INVALID_REQUEST;
        }
        return store.update(transactionalId, txn -> {
            TransactionMetadata m = txn.current();
            if (m == null || m.producerId() != producerId) {
                return TxnError.INVALID_PRODUCER_ID_MAPPING;
            }
            if (m.producerEpoch() != producerEpoch) {
                return TxnError.PRODUCER_FENCED;
            }
            completeIfPrepared(txn);
            m = txn.current();
            TxnError answer = switch (m.state()) {
                case ONGOING -> {
                    txn.write(m.prepared(commit, now()));
                    yield completeIfPrepared(txn) ? TxnError.NONE : TxnError.CONCURRENT_TRANSACTIONS;
                }
                case COMPLETE_COMMIT -> commit ? TxnError.NONE : TxnError.INVALID_TXN_STATE;
                case COMPLETE_ABORT -> commit ? TxnError.INVALID_TXN_STATE : TxnError.NONE;
                // Still prepared: completing it just failed.
                case PREPARE_COMMIT -> commit ? TxnError.CONCURRENT_TRANSACTIONS : TxnError.INVALID_TXN_STATE;
                case PREPARE_ABORT -> commit ? TxnError.INVALID_TXN_STATE : TxnError.CONCURRENT_TRANSACTIONS;
                // Transaction version 1 answers an EndTxn with no transaction INVALID_TXN_STATE, abort included.
                case EMPTY, DEAD -> TxnError.INVALID_TXN_STATE;
            };
            logIfRefused(answer, m, producerEpoch, commit);
            return answer;
        });
    }

    /**
     * EndTxn of transaction version 2 (KIP-890 part 2, EndTxn v5+): as {@link #endTxn}, but every transaction ends at
     * a new epoch, which the markers carry and the answer returns, so a batch of the ended transaction still in flight
     * is fenced at its partitions. When the epoch has run out the producer continues under a new producer id at epoch
     * 0. A retry of an EndTxn already done (the epoch before the bump, or the old id after a rotation) gets the same
     * answer; an abort with no transaction ends an empty one (protocol 2 allows it), a commit with none is
     * INVALID_TXN_STATE. Kafka's rules (its {@code endTransaction} for transaction version 2), here with the markers
     * written inside the call, as {@link #endTxn} does.
     *
     * <p>One departure: a commit with no transaction at the producer's current epoch is answered
     * CONCURRENT_TRANSACTIONS (retriable) while the id's last transition is younger than its transaction timeout
     * ({@link #producesMayStillArrive}), INVALID_TXN_STATE only after.
     */
    public EndTxnResult endTxnBumpingEpoch(String transactionalId, long producerId, short producerEpoch, boolean commit) {
        if (!validId(transactionalId)) {
            return EndTxnResult.failed(TxnError.INVALID_REQUEST);
        }
        return store.update(transactionalId, txn -> {
            TransactionMetadata m = txn.current();
            if (m == null || !isCurrentOrRotatedFrom(m, producerId, producerEpoch)) {
                return EndTxnResult.failed(TxnError.INVALID_PRODUCER_ID_MAPPING);
            }
            if (!completeIfPrepared(txn)) {
                return EndTxnResult.failed(TxnError.CONCURRENT_TRANSACTIONS);
            }
            m = txn.current();
            boolean retry = (m.producerId() == producerId && m.producerEpoch() == producerEpoch + 1)
                    || isRetryAfterRotation(m, producerId, producerEpoch);
            boolean current = m.producerId() == producerId && m.producerEpoch() == producerEpoch;
            if (!current && !(retry && m.state().isIdle() && m.state() != TxnState.EMPTY)) {
                return EndTxnResult.failed(m.producerId() == producerId || retry
                        ? TxnError.PRODUCER_FENCED : TxnError.INVALID_PRODUCER_ID_MAPPING);
            }
            TxnState done = commit ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT;
            if (retry) {
                // The transaction this EndTxn ended: the same outcome is answered again, another is not possible.
                if (m.state() == done) {
                    return new EndTxnResult(TxnError.NONE, m.producerId(), m.producerEpoch());
                }
                logIfRefused(TxnError.INVALID_TXN_STATE, m, producerEpoch, commit);
                return EndTxnResult.failed(TxnError.INVALID_TXN_STATE);
            }
            if (commit && m.state().isIdle() && producesMayStillArrive(m)) {
                return EndTxnResult.failed(TxnError.CONCURRENT_TRANSACTIONS);
            }
            if (m.state() == TxnState.DEAD || (commit && m.state() != TxnState.ONGOING)) {
                logIfRefused(TxnError.INVALID_TXN_STATE, m, producerEpoch, commit);
                return EndTxnResult.failed(TxnError.INVALID_TXN_STATE);
            }
            long next = m.isProducerEpochExhausted() ? newProducerIds.getAsLong() : TransactionMetadata.NO_PRODUCER_ID;
            txn.write(m.preparedWithEpochBump(commit, next, now()));
            if (!completeIfPrepared(txn)) {
                return EndTxnResult.failed(TxnError.CONCURRENT_TRANSACTIONS);
            }
            m = txn.current();
            return new EndTxnResult(TxnError.NONE, m.producerId(), m.producerEpoch());
        });
    }

    /**
     * INVALID_TXN_STATE ends a Kafka producer (a fatal error), so the state that caused it is logged for whoever has
     * to explain the client's failure; the id is the client's own name, no secret.
     */
    private static void logIfRefused(TxnError answer, TransactionMetadata m, short producerEpoch, boolean commit) {
        if (answer == TxnError.INVALID_TXN_STATE) {
            LOG.warn("EndTxn ({}) of transactional id {} at epoch {} refused INVALID_TXN_STATE: the id is {} at epoch {}"
                            + " with {} partitions", commit ? "commit" : "abort", m.transactionalId(), producerEpoch,
                    m.state(), m.producerEpoch(), m.partitions().size());
        }
    }

    /**
     * Whether a commit that finds no transaction may have overtaken the produces that open it. kafka-clients 4.x under
     * protocol 2 can send EndTxn before the transaction's first batch: its Sender asks whether batches are unsent,
     * then takes the next transactional request, and a transaction begun, sent to and committed in between is
     * committed with its batches still queued. Kafka answers INVALID_TXN_STATE, fatal to the producer; the retriable
     * answer lets the client retry the commit once its batches are acknowledged. Bounded by the transaction timeout,
     * after which a transaction would have been aborted anyway.
     */
    private boolean producesMayStillArrive(TransactionMetadata m) {
        return now() - m.lastUpdateMs() < m.timeoutMs();
    }

    /** The id's producer, or its previous one retrying the EndTxn that rotated it ({@link #isRetryAfterRotation}). */
    private static boolean isCurrentOrRotatedFrom(TransactionMetadata m, long producerId, short producerEpoch) {
        return m.producerId() == producerId || isRetryAfterRotation(m, producerId, producerEpoch);
    }

    /** Kafka's retryOnOverflow: the old producer id at its last epoch, the id now at epoch 0 under a new one. */
    private static boolean isRetryAfterRotation(TransactionMetadata m, long producerId, short producerEpoch) {
        return m.producerId() != producerId && m.previousProducerId() == producerId
                && producerEpoch == Short.MAX_VALUE - 1 && m.producerEpoch() == 0;
    }

    /**
     * Refuses a transactional produce unless the ongoing transaction of exactly this producer id and epoch includes
     * {@code tp}. The caller holds {@code tp}'s partition lock from this check until its batch is written (the
     * partition writer's precondition, {@code IngestService#produceTransactionalBatches}). Every end of a transaction
     * (EndTxn, a timeout, a fencing InitProducerId) writes the prepared state before it takes a partition's lock for
     * the marker, so a check that finds the transaction ongoing keeps the marker behind its batch, and a check after
     * the prepared state was written refuses: no batch lands behind its transaction's marker (the hanging transaction
     * KIP-890 guards against). The state is read without the id's lock (a whole version: files are replaced by
     * rename), so the appends of one transaction to its partitions, and their fsyncs, run side by side.
     *
     * @throws TierlogException {@code INVALID_TXN_STATE} when the transaction does not hold the partition (or is not
     *                          ongoing), {@code FENCED_PRODUCER} for an older epoch of the id's producer
     */
    public void requireInTransaction(String transactionalId, long producerId, short producerEpoch, TopicPartition tp) {
        TransactionMetadata m = validId(transactionalId) ? store.read(transactionalId).orElse(null) : null;
        if (m != null && m.producerId() == producerId && m.producerEpoch() > producerEpoch) {
            throw new TierlogException(ErrorType.FENCED_PRODUCER, "producer epoch " + producerEpoch
                    + " was fenced by epoch " + m.producerEpoch());
        }
        if (m == null || m.state() != TxnState.ONGOING || m.producerId() != producerId
                || m.producerEpoch() != producerEpoch || !m.partitions().contains(tp)) {
            throw new TierlogException(ErrorType.INVALID_TXN_STATE, "partition " + tp.partition()
                    + " of the topic is not in an ongoing transaction of this producer (AddPartitionsToTxn first)");
        }
    }

    /** DescribeTransactions for one id; empty is Kafka's TRANSACTIONAL_ID_NOT_FOUND. */
    public Optional<TransactionDescription> describe(String transactionalId) {
        if (!validId(transactionalId)) {
            return Optional.empty();
        }
        return store.read(transactionalId).map(TransactionMetadata::describe);
    }

    /**
     * ListTransactions: ids in any of {@code states} (all when empty) with any of {@code producerIds} (all when empty)
     * whose transaction has run longer than {@code durationFilterMs} (no filter when negative), as Kafka filters.
     */
    public List<TransactionListing> list(Set<TxnState> states, Set<Long> producerIds, long durationFilterMs) {
        long now = now();
        List<TransactionListing> out = new ArrayList<>();
        for (TransactionMetadata m : store.scan()) {
            if ((!states.isEmpty() && !states.contains(m.state()))
                    || (!producerIds.isEmpty() && !producerIds.contains(m.producerId()))
                    || (durationFilterMs >= 0 && now - m.startTimeMs() <= durationFilterMs)) {
                continue;
            }
            out.add(new TransactionListing(m.transactionalId(), m.producerId(), m.state()));
        }
        return out;
    }

    /**
     * Aborts every ongoing transaction past its timeout (started more than its timeout ago, Kafka's strict
     * comparison), fencing the producer with a bumped epoch that the abort markers carry. Returns how many it
     * aborted (prepared to abort; a failed marker write leaves that to {@link #completePrepared}).
     */
    public int abortTimedOut() {
        int aborted = 0;
        for (TransactionMetadata seen : store.scan()) {
            if (!timedOut(seen, now())) {
                continue;
            }
            boolean done = safely(seen, () -> store.update(seen.transactionalId(), txn -> {
                TransactionMetadata m = txn.current();
                // Re-checked under the lock: another instance may have ended, aborted or re-initialized it.
                if (m == null || m.producerId() != seen.producerId() || m.producerEpoch() != seen.producerEpoch()
                        || !timedOut(m, now())) {
                    return false;
                }
                txn.write(m.fencedAbort(now()));
                completeIfPrepared(txn);
                return true;
            }));
            aborted += done ? 1 : 0;
        }
        return aborted;
    }

    /** Completes every transaction left prepared (a crashed instance, a failed marker write); returns how many. */
    public int completePrepared() {
        int completed = 0;
        for (TransactionMetadata seen : store.scan()) {
            if (!seen.state().isPrepared()) {
                continue;
            }
            boolean done = safely(seen, () -> store.update(seen.transactionalId(), txn -> {
                TransactionMetadata m = txn.current();
                return m != null && m.state().isPrepared() && completeIfPrepared(txn);
            }));
            completed += done ? 1 : 0;
        }
        return completed;
    }

    /**
     * Forgets ids idle (Empty, CompleteCommit, CompleteAbort) for longer than {@code transactional.id.expiration.ms}
     * since their last transition, as Kafka does; returns how many. Their producers must InitProducerId again.
     */
    public int expireIdle() {
        long expiration = config.idExpiration().toMillis();
        int expired = 0;
        for (TransactionMetadata seen : store.scan()) {
            if (!idleExpired(seen, now(), expiration)) {
                continue;
            }
            boolean done = safely(seen, () -> store.update(seen.transactionalId(), txn -> {
                TransactionMetadata m = txn.current();
                if (m == null || !idleExpired(m, now(), expiration)) {
                    return false;
                }
                txn.delete();
                return true;
            }));
            expired += done ? 1 : 0;
        }
        return expired;
    }

    /**
     * Frees the state files' versions that writes replaced: a write keeps the version it replaces instead of freeing
     * its blocks on the produce and EndTxn path ({@link io.tierlog.log.io.LockedStateFile}); a periodic task. Returns
     * how many.
     */
    public int reclaimReplaced() {
        return store.reclaim();
    }

    /**
     * One id's step of a periodic task; an exception (a state file that cannot be written or read) is logged and
     * counts as not done, so one bad id does not stop the task for all others. The next run tries again.
     */
    private static boolean safely(TransactionMetadata seen, BooleanSupplier step) {
        try {
            return step.getAsBoolean();
        } catch (RuntimeException e) {
            LOG.error("periodic transaction task failed for {}; retried on the next run", seen.transactionalId(), e);
            return false;
        }
    }

    /**
     * Kafka's checks of AddPartitions/AddOffsets (and here TxnOffsetCommit), after completing a prepared transaction
     * the id still has: the producer id, the exact epoch, no transaction still being completed.
     */
    private TxnError checkProducer(TransactionStore.Txn txn, long producerId, short producerEpoch) {
        TransactionMetadata m = txn.current();
        if (m == null || m.producerId() != producerId) {
            return TxnError.INVALID_PRODUCER_ID_MAPPING;
        }
        if (m.producerEpoch() != producerEpoch) {
            return TxnError.PRODUCER_FENCED;
        }
        if (!completeIfPrepared(txn)) {
            return TxnError.CONCURRENT_TRANSACTIONS;
        }
        return TxnError.NONE;
    }

    /**
     * If the id's transaction is prepared, writes its markers, commits its offsets (commit only) and writes it
     * complete, all under the caller's lock. Returns false, leaving it prepared, if a participant fails; true if
     * nothing is (any longer) prepared. Markers and offsets are idempotent, so repeating this after a crash between
     * any two steps gives the same outcome.
     */
    private boolean completeIfPrepared(TransactionStore.Txn txn) {
        TransactionMetadata m = txn.current();
        if (m == null || !m.state().isPrepared()) {
            return true;
        }
        boolean commit = m.state() == TxnState.PREPARE_COMMIT;
        try {
            if (!m.partitions().isEmpty()) {
                participants.writeMarkers(m.producerId(), m.producerEpoch(), commit, m.partitions());
            }
            if (commit) {
                for (Map.Entry<String, Map<TopicPartition, PendingOffset>> g : m.pendingOffsets().entrySet()) {
                    participants.commitOffsets(g.getKey(), g.getValue());
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("transaction {} (producer {} epoch {}) stays {}: a participant failed; it is completed later",
                    m.transactionalId(), m.producerId(), m.producerEpoch(), m.state(), e);
            return false;
        }
        txn.write(m.completed(now()));
        return true;
    }

    private boolean isExpectedProducer(TransactionMetadata m, long expectedProducerId, short expectedEpoch) {
        // Kafka's isValidProducerId: a just-created id, the current producer id, or the previous one retrying a
        // rotation it never saw the answer to (its epoch was exhausted). The epoch is checked when bumping.
        return m.producerEpoch() == TransactionMetadata.NO_PRODUCER_EPOCH
                || expectedProducerId == m.producerId()
                || (expectedProducerId == m.previousProducerId() && TransactionMetadata.isEpochExhausted(expectedEpoch));
    }

    private static boolean timedOut(TransactionMetadata m, long now) {
        return m.state() == TxnState.ONGOING && m.startTimeMs() + m.timeoutMs() < now;
    }

    private static boolean idleExpired(TransactionMetadata m, long now, long expirationMs) {
        return m.state().isIdle() && m.lastUpdateMs() <= now - expirationMs;
    }

    private static boolean validId(String transactionalId) {
        return transactionalId != null && !transactionalId.isEmpty()
                && transactionalId.getBytes(StandardCharsets.UTF_8).length <= MAX_TRANSACTIONAL_ID_BYTES;
    }

    private long now() {
        return clock.millis();
    }
}
