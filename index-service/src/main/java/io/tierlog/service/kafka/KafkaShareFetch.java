package io.tierlog.service.kafka;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.BatchFetch;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.sharegroups.Ack;
import io.tierlog.sharegroups.AckResult;
import io.tierlog.sharegroups.AckType;
import io.tierlog.sharegroups.LeaseGrants;
import io.tierlog.sharegroups.LeaseWriter;
import io.tierlog.sharegroups.ShareGroups;
import jakarta.inject.Singleton;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareAcknowledgeResponseData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeResponse;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.jboss.logging.Logger;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * ShareFetch and ShareAcknowledge (KIP-932) on the share-group engine that serves HTTP's share groups
 * ({@link ShareGroups}): a Kafka share consumer and an HTTP worker of the same group and topic take records from
 * the same durable per-record state, so each record goes to one of them at a time.
 *
 * <p>A fetch acquires records of its session's partitions (an engine lease of
 * {@code tierlog.kafka.share-record-lock-duration}) and answers the stored batches that hold them with the acquired
 * runs and their delivery counts; the client acknowledges offsets, which {@link ShareSessions} maps back onto the
 * engine's range leases. A fetch that acquires nothing waits, as HTTP's lease long-poll does, for an append, an
 * acknowledgement through this instance, a lock running out, or the recheck interval (for acknowledgements made
 * through other instances), up to {@code max.wait.ms}. Records a member still holds when its session closes are
 * released.
 */
@Singleton
public class KafkaShareFetch {
    private static final Logger LOG = Logger.getLogger(KafkaShareFetch.class);
    /** Kafka's {@code group.share.max.share.sessions}. */
    static final int SESSIONS = 2000;
    /** Kafka's {@code max.poll.records}, for a request that names no maximum. */
    private static final int DEFAULT_MAX_RECORDS = 500;

    private final ShareGroups shares;
    private final PartitionReads reads;
    private final AppendWatcher watcher;
    private final KafkaTopics topics;
    private final Clock clock;
    /** The acquisition lock of a group whose config sets none (its {@code share.record.lock.duration.ms}). */
    private final long defaultLockMs;
    private final Duration recheck;
    private final ShareSessions sessions;

    public KafkaShareFetch(ShareGroups shares, PartitionReads reads, AppendWatcher watcher, TopicStore topics,
                           TierlogConfig config, Clock clock) {
        this.shares = shares;
        this.reads = reads;
        this.watcher = watcher;
        this.topics = new KafkaTopics(topics);
        this.clock = clock;
        this.defaultLockMs = config.kafka().shareRecordLockDuration().toMillis();
        this.recheck = config.share().longPollRecheck();
        this.sessions = new ShareSessions(SESSIONS, KafkaFetch.SESSION_EVICTION, clock);
    }

    /** One partition of a request: where it goes in the answer. */
    private record Named(ShareSessions.Part part, ShareFetchResponseData.PartitionData out) {
    }

    /** A fetch in progress: its session, answer by partition, and the batches it holds until written. */
    private final class Fetch {
        final ShareFetchRequestData in;
        final ShareSessions.Session session;
        final Map<ShareSessions.Part, ShareFetchResponseData.PartitionData> outs = new LinkedHashMap<>();
        final List<BatchFetch> held = new ArrayList<>();
        final long deadlineNanos;
        /** Where this fetch's steps run: the read pool, as the request's quota times it. */
        final Executor pool;
        /** The group's acquisition lock, read with its config when the fetch begins (on the read pool). */
        final long lockMs;
        /** Whether hot batches go out as file ranges ({@link PartitionReads#fetchSlices}). */
        final boolean fileSlices;

        Fetch(ShareFetchRequestData in, ShareSessions.Session session, boolean fileSlices, Executor pool) {
            this.in = in;
            this.session = session;
            this.fileSlices = fileSlices;
            this.pool = pool;
            this.deadlineNanos = System.nanoTime() + Math.max(0, in.maxWaitMs()) * 1_000_000L;
            this.lockMs = shares.config(in.groupId()).leaseMsOr(defaultLockMs);
        }

        ShareFetchResponseData.PartitionData out(ShareSessions.Part part) {
            return outs.computeIfAbsent(part, p -> emptyPartition(p.partition()));
        }

        KafkaApis.Reply reply() {
            ShareFetchResponseData data = new ShareFetchResponseData().setAcquisitionLockTimeoutMs((int) lockMs);
            Map<Uuid, ShareFetchResponseData.ShareFetchableTopicResponse> byTopic = new LinkedHashMap<>();
            outs.forEach((part, out) -> byTopic.computeIfAbsent(part.topicId(), id -> {
                ShareFetchResponseData.ShareFetchableTopicResponse t =
                        new ShareFetchResponseData.ShareFetchableTopicResponse().setTopicId(id);
                data.responses().add(t);
                return t;
            }).partitions().add(out));
            List<BatchFetch> release = List.copyOf(held);
            return new KafkaApis.Reply(data, () -> release.forEach(BatchFetch::close));
        }
    }

    private static ShareFetchResponseData.PartitionData emptyPartition(int partition) {
        return new ShareFetchResponseData.PartitionData().setPartitionIndex(partition)
                .setRecords(KafkaInternals.noRecords());
    }

    private static KafkaApis.Reply error(Errors error, String message) {
        return new KafkaApis.Reply(new ShareFetchResponseData().setErrorCode(error.code()).setErrorMessage(message),
                () -> { });
    }

    /**
     * @param owner      the caller's name: only it may use the share sessions it opens
     * @param fileSlices whether hot batches may be answered as file ranges (the connection can {@code sendfile})
     * @param pool       runs the fetch's steps: the service's read pool, through a wrapper that times them
     */
    CompletableFuture<KafkaApis.Reply> fetch(ShareFetchRequest request, String owner, boolean fileSlices,
                                             Executor pool) {
        ShareFetchRequestData in = request.data();
        return CompletableFuture.supplyAsync(() -> begin(in, owner, fileSlices, pool), pool)
                .thenCompose(f -> f instanceof Fetch fetch ? acquire(fetch) : CompletableFuture.completedFuture(
                        (KafkaApis.Reply) f));
    }

    /** The session step, the partitions' changes and the acknowledgements: a Fetch to acquire for, or a Reply. */
    private Object begin(ShareFetchRequestData in, String owner, boolean fileSlices, Executor pool) {
        if (in.groupId() == null || in.groupId().isEmpty() || in.memberId() == null || in.memberId().isEmpty()) {
            return error(Errors.INVALID_REQUEST, "a share fetch names its group and member");
        }
        ShareSessions.Key key = new ShareSessions.Key(in.groupId(), in.memberId(), owner);
        int epoch = in.shareSessionEpoch();
        ShareSessions.Session session;
        if (epoch == 0) {
            Map<ShareSessions.Part, List<ShareSessions.Acquired>> released = new LinkedHashMap<>();
            ShareSessions.Lookup found = sessions.open(key, released);
            release(in.groupId(), released);
            if (found.error() != Errors.NONE) {
                return error(found.error(), "no share session slot is free on this broker");
            }
            session = found.session();
        } else if (epoch == -1) {
            session = sessions.close(key);
            if (session == null) {
                return error(Errors.SHARE_SESSION_NOT_FOUND, "no share session of member " + in.memberId());
            }
        } else {
            ShareSessions.Lookup found = sessions.next(key, epoch);
            if (found.error() != Errors.NONE) {
                return error(found.error(), "share session epoch " + epoch);
            }
            session = found.session();
        }
        Fetch fetch = new Fetch(in, session, fileSlices, pool);
        Map<String, List<PendingAck>> acks = new LinkedHashMap<>();
        for (ShareFetchRequestData.FetchTopic t : in.topics()) {
            String name = nameOf(t.topicId());
            for (ShareFetchRequestData.FetchPartition p : t.partitions()) {
                ShareSessions.Part part = new ShareSessions.Part(t.topicId(), name, p.partitionIndex());
                ShareFetchResponseData.PartitionData out = fetch.out(part);
                if (name == null) {
                    out.setErrorCode(Errors.UNKNOWN_TOPIC_ID.code());
                    continue;
                }
                if (epoch != -1) {
                    session.add(part);
                }
                if (!p.acknowledgementBatches().isEmpty()) {
                    List<long[]> ranges = new ArrayList<>();
                    List<List<Byte>> types = new ArrayList<>();
                    p.acknowledgementBatches().forEach(b -> {
                        ranges.add(new long[]{b.firstOffset(), b.lastOffset()});
                        types.add(b.acknowledgeTypes());
                    });
                    take(epoch, session, part, ranges, types, out::setAcknowledgeErrorCode, acks);
                }
            }
        }
        for (ShareFetchRequestData.ForgottenTopic f : in.forgottenTopicsData()) {
            String name = nameOf(f.topicId());
            for (int partition : f.partitions()) {
                ShareSessions.Part part = new ShareSessions.Part(f.topicId(), name, partition);
                release(in.groupId(), Map.of(part, session.forget(part)));
            }
        }
        apply(in.groupId(), acks);
        if (epoch == -1) {
            release(in.groupId(), session.drain());
            return fetch.reply();
        }
        if (in.isRenewAck()) {
            return fetch.reply(); // KIP-1222: a fetch carrying renewals acquires nothing new
        }
        return fetch;
    }

    /** An acknowledgement of one partition, and where its error goes. */
    private record PendingAck(Ack ack, Consumer<Short> error) {
    }

    private static void take(int epoch, ShareSessions.Session session, ShareSessions.Part part, List<long[]> ranges,
                             List<List<Byte>> types, Consumer<Short> error,
                             Map<String, List<PendingAck>> acks) {
        if (epoch == 0) {
            error.accept(Errors.INVALID_SHARE_SESSION_EPOCH.code()); // a session's first fetch acknowledges nothing
            return;
        }
        List<Ack> taken = session.take(part, ranges, types);
        if (taken == null) {
            error.accept(Errors.INVALID_RECORD_STATE.code());
            return;
        }
        for (Ack a : taken) {
            acks.computeIfAbsent(part.topic(), t -> new ArrayList<>()).add(new PendingAck(a, error));
        }
    }

    /** Applies the acknowledgements on the engine, topic by topic; a refused one marks its partition. */
    private void apply(String group, Map<String, List<PendingAck>> acks) {
        acks.forEach((topic, pending) -> {
            try {
                List<AckResult> results = shares.acknowledge(group, topic, pending.stream().map(PendingAck::ack).toList());
                for (int i = 0; i < results.size(); i++) {
                    if (!results.get(i).ok()) {
                        pending.get(i).error().accept(Errors.INVALID_RECORD_STATE.code());
                    }
                }
            } catch (RuntimeException e) {
                Errors error = KafkaErrors.of(e);
                pending.forEach(p -> p.error().accept(error.code()));
            }
        });
    }

    /** Gives back records a member no longer holds (its session closed, or it forgot a partition). */
    private void release(String group, Map<ShareSessions.Part, List<ShareSessions.Acquired>> held) {
        Map<String, List<Ack>> byTopic = new HashMap<>();
        held.forEach((part, runs) -> runs.forEach(r -> byTopic.computeIfAbsent(part.topic(), t -> new ArrayList<>())
                .add(new Ack(r.lease(), AckType.RELEASE, r.first(), r.last()))));
        byTopic.forEach((topic, acks) -> {
            try {
                shares.acknowledge(group, topic, acks);
            } catch (RuntimeException e) {
                // Their locks run out instead: released all the same, later.
                LOG.debugf(e, "releasing records of share group %s on %s", group, topic);
            }
        });
    }

    private String nameOf(Uuid topicId) {
        try {
            return topics.resolve(null, topicId).name();
        } catch (RuntimeException unknown) {
            return null;
        }
    }

    /**
     * Acquires records of the session's partitions, from the one after where the last fetch started (so partitions
     * take turns under {@code max.records}); when none is acquired and time is left, waits and tries again.
     */
    private CompletableFuture<KafkaApis.Reply> acquire(Fetch fetch) {
        String group = fetch.in.groupId();
        List<ShareSessions.Part> parts = fetch.session.parts();
        Map<String, CompletableFuture<Void>> changed = new LinkedHashMap<>();
        for (ShareSessions.Part p : parts) {
            changed.computeIfAbsent(p.topic(), t -> shares.awaitChange(group, t)); // taken first: no ack is missed
        }
        int remaining = fetch.in.maxRecords() > 0 ? fetch.in.maxRecords() : DEFAULT_MAX_RECORDS;
        int[] bytesLeft = {fetch.in.maxBytes() > 0 ? fetch.in.maxBytes() : Integer.MAX_VALUE};
        long wakeAt = Long.MAX_VALUE;
        Map<ShareSessions.Part, Long> highWatermarks = new LinkedHashMap<>();
        boolean any = false;
        int start = fetch.session.nextStart(parts.size());
        for (int k = 0; k < parts.size() && remaining > 0 && bytesLeft[0] > 0; k++) {
            ShareSessions.Part part = parts.get((start + k) % parts.size());
            TopicPartition tp = new TopicPartition(part.topic(), part.partition());
            PartWriter writer = new PartWriter(fetch, part, bytesLeft);
            try {
                ShareGroups.Delivered got = shares.leaseOrWake(group, tp, remaining, fetch.lockMs, writer);
                remaining -= got.records();
                any |= got.records() > 0;
                wakeAt = Math.min(wakeAt, got.wakeAtMs());
                highWatermarks.put(part, got.highWatermarks()[part.partition()]);
            } catch (RuntimeException e) {
                fetch.out(part).setErrorCode(KafkaErrors.of(e).code()).setErrorMessage(KafkaErrors.message(e));
                any = true; // an error answers at once, as Kafka does
            }
        }
        long remainingNanos = fetch.deadlineNanos - System.nanoTime();
        if (any || remainingNanos <= 0 || parts.isEmpty() || watcher.isClosed()) {
            changed.values().forEach(f -> f.cancel(false));
            return CompletableFuture.completedFuture(fetch.reply());
        }
        long waitNanos = Math.min(remainingNanos, recheck.toNanos());
        if (wakeAt != Long.MAX_VALUE) {
            long untilWake = Math.max(0, wakeAt - clock.millis()) + 1; // +1: the expiry check is "now >= end"
            waitNanos = Math.min(waitNanos, TimeUnit.MILLISECONDS.toNanos(untilWake));
        }
        Duration wait = Duration.ofNanos(waitNanos);
        List<CompletableFuture<?>> wakers = new ArrayList<>(changed.values());
        highWatermarks.forEach((part, hw) -> wakers.add(watcher.awaitBeyond(
                new TopicPartition(part.topic(), part.partition()), hw, wait)));
        return CompletableFuture.anyOf(wakers.toArray(CompletableFuture[]::new)).thenComposeAsync(woken -> {
            wakers.forEach(f -> f.cancel(false)); // unregisters the waiters that did not fire
            return acquire(fetch);
        }, fetch.pool);
    }

    /**
     * Writes one partition's grants into the answer: the stored batches from the first granted offset through the
     * last (read whole, however many bytes, since every granted record must go out or be released), and the runs
     * acquired; granted offsets below the log start (deleted since) are left out as gone.
     */
    private final class PartWriter implements LeaseWriter {
        private final Fetch fetch;
        private final ShareSessions.Part part;
        private final int[] bytesLeft;

        PartWriter(Fetch fetch, ShareSessions.Part part, int[] bytesLeft) {
            this.fetch = fetch;
            this.part = part;
            this.bytesLeft = bytesLeft;
        }

        @Override
        public int write(LeaseGrants grants, BitSet gone) {
            TopicPartition tp = grants.tp();
            long logStart = reads.logStartOffset(tp);
            List<BatchFetch> got = new ArrayList<>();
            long next = Math.max(grants.firstOffset(), logStart);
            try {
                BatchFetch first = fetch.fileSlices ? firstRead(tp, next, grants.lastOffset()) : null;
                if (first != null) {
                    got.add(first);
                    next = first.nextOffset();
                }
                while (next <= grants.lastOffset()) {
                    BatchFetch f = reads.fetchBatches(tp, next, (int) Math.min(Integer.MAX_VALUE,
                            grants.lastOffset() - next + 1), Integer.MAX_VALUE);
                    if (f.isEmpty()) {
                        f.close();
                        break;
                    }
                    got.add(f);
                    next = f.nextOffset();
                }
            } catch (RuntimeException e) {
                got.forEach(BatchFetch::close);
                throw e;
            }
            int missing = 0;
            for (int i = 0; i < grants.size(); i++) {
                if (grants.offset(i) < logStart || grants.offset(i) >= next) {
                    gone.set(i); // deleted by retention or compaction since it was appended
                    missing++;
                }
            }
            ShareFetchResponseData.PartitionData out = fetch.out(part);
            int bytes = 0;
            if (got.size() == 1) {
                BatchFetch only = got.get(0);
                fetch.held.add(only);
                out.setRecords(KafkaInternals.records(only));
                bytes = only.length();
            } else if (!got.isEmpty()) {
                for (BatchFetch f : got) {
                    bytes += f.length();
                }
                ByteBuffer all = ByteBuffer.allocate(bytes);
                got.forEach(f -> {
                    all.put(f.batches().buffer().duplicate());
                    f.close();
                });
                out.setRecords(KafkaInternals.records(all.flip()));
            }
            bytesLeft[0] -= bytes;
            BitSet present = new BitSet(grants.size());
            present.set(0, grants.size());
            present.andNot(gone);
            for (int i = present.nextSetBit(0), j; i >= 0; i = present.nextSetBit(j + 1)) {
                j = grants.runEnd(i, present);
                out.acquiredRecords().add(new ShareFetchResponseData.AcquiredRecords().setFirstOffset(grants.offset(i))
                        .setLastOffset(grants.offset(j)).setDeliveryCount((short) grants.deliveryCount(i)));
                fetch.session.acquired(part, new ShareSessions.Acquired(grants.offset(i), grants.offset(j),
                        grants.deliveryCount(i), new String(grants.rangeLeaseAscii(i, j), StandardCharsets.US_ASCII)));
            }
            return missing;
        }
    }

    /**
     * The first read of a grant's batches as a file range to {@code sendfile}, when one range holds them all (ADR
     * 0037); a range that stops short of {@code last} (at its segment's end) is given back, null, and the batches are
     * read into memory and joined there. A read the hot tier could not slice comes back in memory, and later reads
     * extend it.
     */
    private BatchFetch firstRead(TopicPartition tp, long from, long last) {
        BatchFetch f = reads.fetchSlices(tp, from, (int) Math.min(Integer.MAX_VALUE, last - from + 1),
                Integer.MAX_VALUE, false);
        if (f.isEmpty() || f.slice() != null && f.nextOffset() <= last) {
            f.close();
            return null;
        }
        return f;
    }

    /** ShareAcknowledge: the acknowledgements of a ShareFetch without the fetch; epoch -1 also ends the session. */
    CompletableFuture<KafkaApis.Reply> acknowledge(ShareAcknowledgeRequest request, String owner, Executor pool) {
        ShareAcknowledgeRequestData in = request.data();
        return CompletableFuture.supplyAsync(() -> acknowledge(in, owner), pool);
    }

    private KafkaApis.Reply acknowledge(ShareAcknowledgeRequestData in, String owner) {
        ShareAcknowledgeResponseData out = new ShareAcknowledgeResponseData();
        ShareSessions.Key key = new ShareSessions.Key(in.groupId(), in.memberId(), owner);
        int epoch = in.shareSessionEpoch();
        ShareSessions.Session session;
        if (epoch == -1) {
            session = sessions.close(key);
        } else if (epoch == 0) {
            return new KafkaApis.Reply(out.setErrorCode(Errors.INVALID_SHARE_SESSION_EPOCH.code())
                    .setErrorMessage("ShareAcknowledge needs an open share session"), () -> { });
        } else {
            ShareSessions.Lookup found = sessions.next(key, epoch);
            if (found.error() != Errors.NONE) {
                return new KafkaApis.Reply(out.setErrorCode(found.error().code()), () -> { });
            }
            session = found.session();
        }
        if (session == null) {
            return new KafkaApis.Reply(out.setErrorCode(Errors.SHARE_SESSION_NOT_FOUND.code()), () -> { });
        }
        Map<String, List<PendingAck>> acks = new LinkedHashMap<>();
        for (ShareAcknowledgeRequestData.AcknowledgeTopic t : in.topics()) {
            String name = nameOf(t.topicId());
            ShareAcknowledgeResponseData.ShareAcknowledgeTopicResponse topicOut =
                    new ShareAcknowledgeResponseData.ShareAcknowledgeTopicResponse().setTopicId(t.topicId());
            out.responses().add(topicOut);
            for (ShareAcknowledgeRequestData.AcknowledgePartition p : t.partitions()) {
                ShareAcknowledgeResponseData.PartitionData partOut =
                        new ShareAcknowledgeResponseData.PartitionData().setPartitionIndex(p.partitionIndex());
                topicOut.partitions().add(partOut);
                if (name == null) {
                    partOut.setErrorCode(Errors.UNKNOWN_TOPIC_ID.code());
                    continue;
                }
                List<long[]> ranges = new ArrayList<>();
                List<List<Byte>> types = new ArrayList<>();
                p.acknowledgementBatches().forEach(b -> {
                    ranges.add(new long[]{b.firstOffset(), b.lastOffset()});
                    types.add(b.acknowledgeTypes());
                });
                take(epoch, session, new ShareSessions.Part(t.topicId(), name, p.partitionIndex()), ranges, types,
                        partOut::setErrorCode, acks);
            }
        }
        apply(in.groupId(), acks);
        if (epoch == -1) {
            release(in.groupId(), session.drain());
        }
        return new KafkaApis.Reply(new ShareAcknowledgeResponse(out));
    }
}
