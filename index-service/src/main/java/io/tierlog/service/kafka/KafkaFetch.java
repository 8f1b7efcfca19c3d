package io.tierlog.service.kafka;

import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.metrics.ServiceMetrics;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.BatchFetch;
import io.tierlog.service.read.CommittedFetch;
import io.tierlog.service.read.FetchResult;
import io.tierlog.service.read.PartitionReads;
import jakarta.inject.Singleton;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Fetch and ListOffsets through {@link PartitionReads}, the service's one read path: stored batches are sent as
 * they are, from the hot or the cold tier (a read never spans the two; the client's next fetch continues). Hot
 * batches are not read at all on a plaintext connection: the answer carries their range of the segment file and
 * the socket sends it with {@code sendfile} (ADR 0037; the CRC check is then the client's, as with Kafka's broker).
 * Cold batches, and hot ones on a TLS connection (a file region cannot pass through TLS), stay in the pooled direct
 * memory they were read into, CRC-checked, and are written to the socket from there ({@link Frames#gathering},
 * ADR 0024). The connection gives the files and the memory back once the response is written.
 *
 * <p>Limits as Kafka applies them: each partition returns whole batches up to its {@code partition_max_bytes} and
 * the request's remaining {@code max_bytes}; only the fetch's first data may exceed them (its first batch, so a
 * consumer always progresses); a later partition whose next batch does not fit returns none this time.
 *
 * <p>Incremental fetch sessions (KIP-227) are kept in {@link FetchSessions}: a fetch with session epoch 0 starts one,
 * later fetches name only the partitions whose offset changed and are answered with only the partitions that have
 * news, as Kafka does; epoch -1 fetches are full fetches without a session. A fetch that finds fewer than {@code min.bytes} waits up to {@code max.wait.ms} on the
 * {@link AppendWatcher} for any of its partitions to grow (no thread is held while it waits), then reads again,
 * until it has {@code min.bytes} or the wait is over. A partition error answers at once, as Kafka does.
 */
@Singleton
public class KafkaFetch {
    private final PartitionReads reads;
    private final AppendWatcher watcher;
    private final ServiceMetrics metrics;
    private final KafkaTopics topics;
    /**
     * Kafka limits a fetch by bytes only: the HTTP API's record cap ({@code tierlog.fetch.max-records-limit}) would
     * cut a partition of small records short of its {@code partition_max_bytes}, where Kafka's broker answers more.
     */
    private static final int NO_RECORD_LIMIT = Integer.MAX_VALUE;
    private final FetchSessions sessions;
    /** Kafka's {@code min.incremental.fetch.session.eviction.ms}: a session idle this long may give up its slot. */
    static final Duration SESSION_EVICTION = Duration.ofMinutes(2);

    public KafkaFetch(PartitionReads reads, AppendWatcher watcher, ServiceMetrics metrics,
                      TopicStore topics, TierlogConfig config, Clock clock) {
        this.reads = reads;
        this.watcher = watcher;
        this.metrics = metrics;
        this.topics = new KafkaTopics(topics);
        this.sessions = new FetchSessions(config.kafka().fetchSessions(), SESSION_EVICTION, clock);
    }

    /** Where a consumer in another rack should read a partition instead (KIP-392): a live broker's node id. */
    @FunctionalInterface
    interface ReadReplicas {
        int of(String topic, int partition);
    }

    /** The incremental fetch sessions of this instance (for tests and operators). */
    FetchSessions sessions() {
        return sessions;
    }

    /**
     * Serves a fetch. Epoch -1 (or a version without sessions): a full fetch and no session. Epoch 0: a full fetch
     * that starts a session of its partitions (and ends the one it names). Epoch above 0: an incremental fetch of
     * session {@code sessionId}, whose answer names only partitions with records, an error, or a new high watermark
     * or log start.
     *
     * @param owner     the caller's name: only it may use the sessions it starts
     * @param fileSlices whether hot batches may be answered as file ranges (the connection can {@code sendfile})
     * @param readReplicas null: read here; else each partition is answered at once with no records and the broker
     *                     the consumer should fetch it from (its preferred read replica, as Kafka's leader answers)
     * @param pool       runs the reads: the service's read pool, through a wrapper timing them for the request rate
     */
    CompletableFuture<KafkaApis.Reply> fetch(FetchRequest request, short version, String owner, boolean fileSlices,
                                             ReadReplicas readReplicas, Executor pool) {
        FetchRequestData data = request.data();
        long deadline = System.nanoTime() + Math.max(0, data.maxWaitMs()) * 1_000_000L;
        Plan plan;
        if (version >= 7 && data.sessionEpoch() > 0) {
            FetchSessions.Lookup found = sessions.incremental(data.sessionId(), data.sessionEpoch(), owner);
            if (found.error() != Errors.NONE) {
                return CompletableFuture.completedFuture(new KafkaApis.Reply(new FetchResponseData()
                        .setErrorCode(found.error().code()).setSessionId(0), () -> { }));
            }
            plan = Plan.incremental(found.session(), data, fileSlices, readReplicas);
        } else {
            if (version >= 7 && data.sessionId() != 0) {
                sessions.close(data.sessionId(), owner);
            }
            plan = Plan.full(data, version >= 7 && data.sessionEpoch() == 0, owner, fileSlices, readReplicas);
        }
        return CompletableFuture.supplyAsync(() -> round(data, plan), pool)
                .thenCompose(round -> untilEnough(data, plan, round, deadline, pool));
    }

    /** Answers with {@code round} if it is enough or time is up; else releases it, waits for appends, reads again. */
    private CompletableFuture<KafkaApis.Reply> untilEnough(FetchRequestData data, Plan plan, Round round, long deadline,
                                                           Executor pool) {
        long remainingMs = (deadline - System.nanoTime()) / 1_000_000L;
        if (round.bytes >= Math.max(1, data.minBytes()) || round.anyError || round.redirected || remainingMs <= 0
                || round.waitOn.isEmpty()) {
            return CompletableFuture.completedFuture(round.reply(plan));
        }
        round.release();
        List<CompletableFuture<Boolean>> waits = new ArrayList<>(round.waitOn.size());
        for (Position p : round.waitOn) {
            waits.add(watcher.awaitBeyond(p.tp, p.offset, Duration.ofMillis(remainingMs)));
        }
        return CompletableFuture.anyOf(waits.toArray(CompletableFuture[]::new))
                .thenApplyAsync(woken -> {
                    waits.forEach(w -> w.cancel(false));
                    return round(data, plan);
                }, pool)
                .thenCompose(next -> untilEnough(data, plan, next, deadline, pool));
    }

    private record Position(TopicPartition tp, long offset) {
    }

    /** One partition to read: its session entry and the offset and size asked for, fixed when the request came. */
    private record Want(FetchSessions.Entry entry, long fetchOffset, int maxBytes) {
    }

    /**
     * What a fetch reads and how it answers: the partitions (the request's, or the whole session's), and the
     * session it belongs to (null: none), or whether it starts one.
     */
    private static final class Plan {
        final List<Want> wants;
        final FetchSessions.Session session;
        final boolean startSession;
        final String owner;
        /** Whether hot batches are answered as file ranges (see {@link PartitionReads#fetchSlices}). */
        final boolean fileSlices;
        /** Null: partitions are read here; else where the consumer should read each instead. */
        final ReadReplicas readReplicas;

        private Plan(List<Want> wants, FetchSessions.Session session, boolean startSession, String owner,
                     boolean fileSlices, ReadReplicas readReplicas) {
            this.wants = wants;
            this.session = session;
            this.startSession = startSession;
            this.owner = owner;
            this.fileSlices = fileSlices;
            this.readReplicas = readReplicas;
        }

        static Plan full(FetchRequestData data, boolean startSession, String owner, boolean fileSlices,
                         ReadReplicas readReplicas) {
            // A partition named twice is read once, as the last naming asks, in the place of the first (Kafka's
            // broker keeps a request's partitions in a map too): one answer per partition.
            Map<FetchSessions.Key, Want> wants = new LinkedHashMap<>();
            for (FetchRequestData.FetchTopic t : data.topics()) {
                for (FetchRequestData.FetchPartition p : t.partitions()) {
                    FetchSessions.Key key = new FetchSessions.Key(t.topic(), t.topicId(), p.partition());
                    FetchSessions.Entry e = new FetchSessions.Entry(key, p.fetchOffset(), p.partitionMaxBytes());
                    wants.put(key, new Want(e, e.fetchOffset, e.maxBytes));
                }
            }
            return new Plan(new ArrayList<>(wants.values()), null, startSession, owner, fileSlices, readReplicas);
        }

        /** Applies the request's changes (added or moved partitions, forgotten ones) to the session. */
        static Plan incremental(FetchSessions.Session session, FetchRequestData data, boolean fileSlices,
                                ReadReplicas readReplicas) {
            List<Want> wants = new ArrayList<>();
            synchronized (session) {
                Map<FetchSessions.Key, FetchSessions.Entry> parts = FetchSessions.partitions(session);
                for (FetchRequestData.ForgottenTopic f : data.forgottenTopicsData()) {
                    for (int partition : f.partitions()) {
                        parts.remove(new FetchSessions.Key(f.topic(), f.topicId(), partition));
                    }
                }
                for (FetchRequestData.FetchTopic t : data.topics()) {
                    for (FetchRequestData.FetchPartition p : t.partitions()) {
                        FetchSessions.Key key = new FetchSessions.Key(t.topic(), t.topicId(), p.partition());
                        FetchSessions.Entry e = parts.computeIfAbsent(key,
                                k -> new FetchSessions.Entry(k, p.fetchOffset(), p.partitionMaxBytes()));
                        e.fetchOffset = p.fetchOffset();
                        e.maxBytes = p.partitionMaxBytes();
                    }
                }
                for (FetchSessions.Entry e : parts.values()) {
                    wants.add(new Want(e, e.fetchOffset, e.maxBytes));
                }
            }
            return new Plan(wants, session, false, null, fileSlices, readReplicas);
        }
    }

    /**
     * One read of every partition of the plan, with the memory and files it holds until its response is written.
     */
    private final class Round {
        final List<FetchResponseData.PartitionData> outs = new ArrayList<>();
        final List<BatchFetch> held = new ArrayList<>();
        final List<Position> waitOn = new ArrayList<>();
        int bytes;
        int records;
        boolean anyError;
        /** Some partition was answered with a preferred read replica: answered at once, as Kafka does. */
        boolean redirected;
        final long started = System.nanoTime();

        void release() {
            held.forEach(BatchFetch::close);
            held.clear();
        }

        KafkaApis.Reply reply(Plan plan) {
            metrics.fetched(records, bytes, System.nanoTime() - started);
            FetchResponseData out = new FetchResponseData().setSessionId(0);
            List<Want> answered = new ArrayList<>();
            if (plan.session == null) {
                for (int i = 0; i < outs.size(); i++) {
                    Want w = plan.wants.get(i);
                    w.entry().told(outs.get(i).highWatermark(), outs.get(i).logStartOffset());
                    answered.add(w);
                }
                if (plan.startSession) {
                    FetchSessions.Session s = sessions.create(plan.owner, plan.wants.stream().map(Want::entry).toList());
                    out.setSessionId(s == null ? 0 : s.id);
                }
            } else {
                synchronized (plan.session) {
                    Map<FetchSessions.Key, FetchSessions.Entry> parts = FetchSessions.partitions(plan.session);
                    for (int i = 0; i < outs.size(); i++) {
                        Want w = plan.wants.get(i);
                        FetchResponseData.PartitionData p = outs.get(i);
                        boolean news = w.entry().told(p.highWatermark(), p.logStartOffset());
                        boolean data = KafkaInternals.hasRecords(p.records());
                        if (news || data || p.errorCode() != Errors.NONE.code() || p.preferredReadReplica() >= 0) {
                            answered.add(w);
                        }
                        if (data && parts.remove(w.entry().key) != null) {
                            // Kafka's fairness rule: partitions that returned data go to the back of the session.
                            parts.put(w.entry().key, w.entry());
                        }
                    }
                }
                out.setSessionId(plan.session.id);
            }
            Map<FetchSessions.Key, FetchResponseData.PartitionData> byKey = new java.util.HashMap<>();
            for (int i = 0; i < outs.size(); i++) {
                byKey.put(plan.wants.get(i).entry().key, outs.get(i));
            }
            FetchResponseData.FetchableTopicResponse topicOut = null;
            for (Want w : answered) {
                FetchSessions.Key k = w.entry().key;
                if (topicOut == null || !java.util.Objects.equals(topicOut.topic(), k.topic())
                        || !java.util.Objects.equals(topicOut.topicId(), k.topicId())) {
                    topicOut = new FetchResponseData.FetchableTopicResponse().setTopic(k.topic()).setTopicId(k.topicId());
                    out.responses().add(topicOut);
                }
                topicOut.partitions().add(byKey.get(k));
            }
            return new KafkaApis.Reply(out, this::release);
        }
    }

    private Round round(FetchRequestData data, Plan plan) {
        Round round = new Round();
        boolean readCommitted = data.isolationLevel() == IsolationLevel.READ_COMMITTED.id();
        int budget = data.maxBytes() <= 0 ? Integer.MAX_VALUE : data.maxBytes();
        FetchSessions.Key topicOf = null;
        TopicMetadata topic = null;
        RuntimeException topicError = null;
        try {
            for (int w = 0; w < plan.wants.size(); w++) {
                Want want = plan.wants.get(w);
                FetchSessions.Key key = want.entry().key;
                if (topicOf == null || !java.util.Objects.equals(topicOf.topic(), key.topic())
                        || !java.util.Objects.equals(topicOf.topicId(), key.topicId())) {
                    topicOf = key;
                    topic = null;
                    topicError = null;
                    try {
                        topic = topics.resolve(key.topic(), key.topicId());
                    } catch (RuntimeException e) {
                        topicError = e;
                    }
                }
                // A read_uncommitted answer has no aborted-transaction list at all (null, as Kafka's broker sends it).
                FetchResponseData.PartitionData out = new FetchResponseData.PartitionData()
                        .setPartitionIndex(key.partition()).setRecords(KafkaInternals.noRecords()).setHighWatermark(-1)
                        .setLastStableOffset(-1).setLogStartOffset(-1).setPreferredReadReplica(-1)
                        .setAbortedTransactions(readCommitted ? new ArrayList<>(0) : null);
                try {
                    if (topicError != null) {
                        throw topicError;
                    }
                    topic.requirePartition(key.partition());
                    TopicPartition tp = new TopicPartition(topic.name(), key.partition());
                    int maxBytes = Math.min(want.maxBytes(), budget);
                    if (plan.readReplicas != null) {
                        // Kafka's leader answers a consumer of another rack with its extent and where to read.
                        long hw = reads.highWatermark(tp);
                        out.setHighWatermark(hw).setLastStableOffset(stableOffset(tp, hw, readCommitted))
                                .setLogStartOffset(reads.logStartOffset(tp))
                                .setPreferredReadReplica(plan.readReplicas.of(topic.name(), key.partition()));
                        round.redirected = true;
                    } else if (budget <= 0) {
                        // The request's max.bytes is spent: the extent only, as Kafka answers.
                        long hw = reads.highWatermark(tp);
                        out.setHighWatermark(hw).setLastStableOffset(stableOffset(tp, hw, readCommitted))
                                .setLogStartOffset(reads.logStartOffset(tp));
                    } else {
                        BatchFetch f = plan.fileSlices
                                ? reads.fetchSlices(tp, want.fetchOffset(), NO_RECORD_LIMIT, Math.max(1, maxBytes),
                                        readCommitted)
                                : reads.fetchBatches(tp, want.fetchOffset(), NO_RECORD_LIMIT, Math.max(1, maxBytes),
                                        readCommitted);
                        long stable = f.highWatermark();
                        if (readCommitted) {
                            CommittedFetch cut = reads.cutAtLastStableOffset(tp, f);
                            f = cut.fetch();
                            stable = cut.lastStableOffset();
                            if (!f.isEmpty()) {
                                out.setAbortedTransactions(aborted(reads.abortedTransactions(tp, f,
                                        want.fetchOffset(), f.nextOffset())));
                            }
                        }
                        round.held.add(f);
                        out.setHighWatermark(f.highWatermark()).setLastStableOffset(stable)
                                .setLogStartOffset(f.logStartOffset());
                        if (round.bytes > 0 && f.length() > maxBytes) {
                            // Kafka's rule: only a fetch's first data may exceed its limits (one batch, so that a
                            // consumer always progresses); here the batch waits for a fetch it comes first in.
                            f.close();
                        } else if (!f.isEmpty()) {
                            out.setRecords(KafkaInternals.records(f));
                            round.bytes += f.length();
                            round.records += f.records();
                            budget -= f.sentLength();
                        } else {
                            // Held back by an open transaction, wait for the log to grow past what is there (its
                            // marker); else for anything past the offset asked for.
                            round.waitOn.add(new Position(tp, stable < f.highWatermark() ? f.highWatermark()
                                    : want.fetchOffset()));
                        }
                    }
                } catch (RuntimeException e) {
                    round.anyError = true;
                    out.setErrorCode(KafkaErrors.of(e).code());
                    if (KafkaErrors.unwrap(e) instanceof TierlogException t && t.extra().get("highWatermark") != null) {
                        out.setHighWatermark(((Number) t.extra().get("highWatermark")).longValue())
                                .setLogStartOffset(((Number) t.extra().get("logStartOffset")).longValue());
                    }
                }
                round.outs.add(out);
            }
        } catch (RuntimeException e) {
            round.release();
            throw e;
        }
        return round;
    }

    /**
     * The last stable offset a read_committed consumer is told (the first offset of the oldest open transaction, or
     * the high watermark); a read_uncommitted one is told the high watermark, which is all it uses, so its fetches
     * never read the transaction index.
     */
    private long stableOffset(TopicPartition tp, long highWatermark, boolean readCommitted) {
        return readCommitted ? reads.hot().log().transactions(tp).lastStableOffset(highWatermark) : highWatermark;
    }

    /** Kafka's aborted-transaction list: each aborted producer and its transaction's first offset. */
    private static List<FetchResponseData.AbortedTransaction> aborted(List<AbortedTransaction> aborted) {
        List<FetchResponseData.AbortedTransaction> out = new ArrayList<>(aborted.size());
        for (AbortedTransaction a : aborted) {
            out.add(new FetchResponseData.AbortedTransaction().setProducerId(a.producerId())
                    .setFirstOffset(a.firstOffset()));
        }
        return out;
    }

    /**
     * OffsetForLeaderEpoch with Metadata's leader epochs: partitions have none (-1, one copy of the log, no
     * truncation), so every known partition is answered as Kafka answers for a log without epoch information,
     * epoch -1 and end offset -1 (UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET), and an unknown one with
     * UNKNOWN_TOPIC_OR_PARTITION. Clients send it only for partitions with a known epoch, so none does in practice.
     */
    OffsetsForLeaderEpochResponse offsetForLeaderEpoch(OffsetsForLeaderEpochRequest request) {
        OffsetForLeaderEpochResponseData out = new OffsetForLeaderEpochResponseData();
        for (OffsetForLeaderEpochRequestData.OffsetForLeaderTopic asked : request.data().topics()) {
            OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult topicOut =
                    new OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult().setTopic(asked.topic());
            for (OffsetForLeaderEpochRequestData.OffsetForLeaderPartition p : asked.partitions()) {
                OffsetForLeaderEpochResponseData.EpochEndOffset r = new OffsetForLeaderEpochResponseData.EpochEndOffset()
                        .setPartition(p.partition()).setLeaderEpoch(OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH)
                        .setEndOffset(OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH_OFFSET);
                try {
                    topics.byName(asked.topic()).requirePartition(p.partition());
                } catch (RuntimeException e) {
                    r.setErrorCode(KafkaErrors.of(e).code());
                }
                topicOut.partitions().add(r);
            }
            out.topics().add(topicOut);
        }
        return new OffsetsForLeaderEpochResponse(out);
    }

    /**
     * Earliest (-2), latest (-1; for read_committed the last stable offset, as Kafka answers), the first record with
     * the largest timestamp (-3), earliest still hot (-4), latest tiered (-5), earliest not yet tiered (-6), or the
     * first offset at or after a timestamp.
     */
    ListOffsetsResponse listOffsets(ListOffsetsRequest request) {
        ListOffsetsResponseData out = new ListOffsetsResponseData();
        boolean readCommitted = request.data().isolationLevel() == IsolationLevel.READ_COMMITTED.id();
        for (ListOffsetsRequestData.ListOffsetsTopic asked : request.data().topics()) {
            ListOffsetsResponseData.ListOffsetsTopicResponse topicOut =
                    new ListOffsetsResponseData.ListOffsetsTopicResponse().setName(asked.name());
            for (ListOffsetsRequestData.ListOffsetsPartition p : asked.partitions()) {
                ListOffsetsResponseData.ListOffsetsPartitionResponse r =
                        new ListOffsetsResponseData.ListOffsetsPartitionResponse().setPartitionIndex(p.partitionIndex())
                                .setLeaderEpoch(-1).setTimestamp(-1).setOffset(-1);
                try {
                    TopicMetadata topic = topics.byName(asked.name());
                    topic.requirePartition(p.partitionIndex());
                    TopicPartition tp = new TopicPartition(topic.name(), p.partitionIndex());
                    long ts = p.timestamp();
                    if (ts == ListOffsetsRequest.EARLIEST_TIMESTAMP) {
                        r.setOffset(Math.min(reads.logStartOffset(tp), reads.highWatermark(tp)));
                    } else if (ts == ListOffsetsRequest.LATEST_TIMESTAMP) {
                        r.setOffset(stableOffset(tp, reads.highWatermark(tp), readCommitted));
                    } else if (ts == ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP) {
                        r.setOffset(reads.state(tp).hotStartOffset());
                    } else if (ts == ListOffsetsRequest.LATEST_TIERED_TIMESTAMP) {
                        r.setOffset(reads.latestTieredOffset(tp));
                    } else if (ts == ListOffsetsRequest.EARLIEST_PENDING_UPLOAD_TIMESTAMP) {
                        r.setOffset(reads.earliestPendingUploadOffset(tp));
                    } else if (ts == ListOffsetsRequest.MAX_TIMESTAMP) {
                        // As Kafka: only what a reader at this isolation may read (below the high watermark or LSO).
                        reads.maxTimestamp(tp, stableOffset(tp, reads.highWatermark(tp), readCommitted))
                                .ifPresent(found -> r.setOffset(found.offset()).setTimestamp(found.timestamp()));
                    } else if (ts >= 0) {
                        long offset = reads.offsetForTimestamp(tp, ts);
                        if (offset < reads.highWatermark(tp)) {
                            FetchResult found = reads.fetch(tp, offset, 1, 1 << 20);
                            if (!found.records().isEmpty()) {
                                LogRecord first = found.records().get(0);
                                r.setOffset(first.offset()).setTimestamp(first.timestamp());
                            }
                        }
                    } else {
                        r.setErrorCode(Errors.UNSUPPORTED_VERSION.code());
                    }
                } catch (RuntimeException e) {
                    r.setErrorCode(KafkaErrors.of(e).code());
                }
                topicOut.partitions().add(r);
            }
            out.topics().add(topicOut);
        }
        return new ListOffsetsResponse(out);
    }
}
