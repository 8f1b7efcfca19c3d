package io.tierlog.sharegroups;

import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.Partitioner;
import io.tierlog.ingest.ProduceRecord;
import io.tierlog.ingest.ProduceRequest;
import io.tierlog.ingest.ProducerRef;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.OffsetRange;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.sharegroups.SharePartition.Archived;
import io.tierlog.sharegroups.SharePartition.Granted;
import io.tierlog.sharegroups.SharePartitionState.DeadLetter;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * Share groups (Kafka's KIP-932 over HTTP): records of a topic leased one by one to many consumers, acknowledged one
 * by one. Every call is stateless: it reads and writes the share-partition's state file under its lock
 * ({@link ShareGroupFiles}), so any number of processes on the hot volume serve the same groups, and a process that
 * dies holds nothing. Thread-safe.
 *
 * <p>Durability: a lease or an ack is in the state file before the call returns (fsynced under the fsync policy
 * {@code always}; in the page cache under {@code interval} and {@code never}, like records), so a crash loses nothing
 * answered. A record archived with a dead-letter topic set is first written into the state as a pending dead letter
 * with its dead-letter partition and an idempotent-producer sequence, then produced through {@link IngestService}
 * (durable by the fsync policy), then removed from the pending list, all before the call returns. A crash between
 * the produce and the removal leaves it pending; the next call on that share-partition, in any process, produces it
 * again with the same producer id and sequence, which the log answers as a duplicate: each archived record lands in
 * the dead-letter topic once (as long as the producer id is remembered, {@code producer.id.expiration}).
 */
public final class ShareGroups {
    private static final System.Logger LOG = System.getLogger(ShareGroups.class.getName());

    private final ShareGroupFiles files;
    private final TopicStore topics;
    private final ShareRecords records;
    private final IngestService ingest;
    private final Clock clock;
    private final int maxInFlight;
    private final long graceMs;
    private final ShareMeters meters;
    private final SecureRandom random = new SecureRandom();
    private final AtomicInteger rotation = new AtomicInteger();
    private final Map<String, Snapshot> snapshots = new ConcurrentHashMap<>();
    private final Map<String, PartitionCommits> commits = new ConcurrentHashMap<>();
    private final Map<String, java.util.Set<CompletableFuture<Void>>> waiters = new ConcurrentHashMap<>();
    /** Each group's config file content as last parsed, with the config it holds (parsing showed in profiles). */
    private final Map<String, ParsedConfig> parsedConfigs = new ConcurrentHashMap<>();

    private record ParsedConfig(byte[] bytes, ShareGroupConfig config) {
    }

    /** What this process last saw of a share-partition, for gauges. */
    public record Snapshot(String group, TopicPartition tp, long startOffset, long endOffset, int available, int leased) {
    }

    /**
     * @param maxInFlight the most records of a share-partition in flight (leased, available for redelivery, or done
     *                    above an undone one) at once (Kafka's {@code group.share.partition.max.record.locks})
     * @param clockSkew   how far apart the clocks of the processes may be: an expired lease is re-leased only this
     *                    much later (see {@link SharePartition})
     */
    public ShareGroups(Path dataDir, TopicStore topics, ShareRecords records, IngestService ingest, Clock clock,
                       int maxInFlight, Duration clockSkew, ShareMeters meters) {
        this(dataDir, topics, records, ingest, clock, maxInFlight, clockSkew, meters, FsyncPolicy.ALWAYS);
    }

    /**
     * @param fsync as {@code tierlog.fsync} for records: {@code always} fsyncs every share-partition state write
     *              before the answer (a lease or ack survives a machine loss); {@code interval} and {@code never} write
     *              it to the page cache before the answer (it survives a crash of the process, not of the machine)
     */
    public ShareGroups(Path dataDir, TopicStore topics, ShareRecords records, IngestService ingest, Clock clock,
                       int maxInFlight, Duration clockSkew, ShareMeters meters, FsyncPolicy fsync) {
        this(dataDir, topics, records, ingest, clock, maxInFlight, clockSkew, meters, fsync,
                ShareStateLog.MIN_COMPACT_BYTES);
    }

    /** @param minCompactBytes see {@link ShareStateLog} (tests make it small so that snapshots are taken often) */
    ShareGroups(Path dataDir, TopicStore topics, ShareRecords records, IngestService ingest, Clock clock,
                int maxInFlight, Duration clockSkew, ShareMeters meters, FsyncPolicy fsync, long minCompactBytes) {
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("tierlog.share.max-in-flight-records must be >= 1: " + maxInFlight);
        }
        this.files = new ShareGroupFiles(dataDir, fsync == FsyncPolicy.ALWAYS, minCompactBytes);
        this.topics = topics;
        this.records = records;
        this.ingest = ingest;
        this.clock = clock;
        this.maxInFlight = maxInFlight;
        this.graceMs = clockSkew.toMillis();
        this.meters = meters;
    }

    /**
     * Sets the group's config (replacing the previous one).
     *
     * @throws TierlogException {@code invalid-config} for a dead-letter topic that does not exist
     */
    public ShareGroupConfig configure(String group, ShareGroupConfig config) {
        if (config.deadLetterTopic() != null && topics.find(config.deadLetterTopic()).isEmpty()) {
            throw new TierlogException(ErrorType.INVALID_CONFIG, "dead.letter.topic " + config.deadLetterTopic()
                    + " does not exist", Map.of("field", "dead.letter.topic"));
        }
        files.config(group).update(s -> {
            s.write(ShareGroupFiles.write(config.toMap()));
            return null;
        });
        return config;
    }

    /** The group's config: as last set, or the defaults. */
    public ShareGroupConfig config(String group) {
        return storedConfig(group).orElse(ShareGroupConfig.DEFAULTS);
    }

    private Optional<ShareGroupConfig> storedConfig(String group) {
        byte[] bytes = files.config(group).readUnlocked();
        if (bytes == null) {
            return Optional.empty();
        }
        // The file is read every call (another process may have changed it); only an unchanged content skips parsing.
        ParsedConfig last = parsedConfigs.get(group);
        if (last != null && Arrays.equals(last.bytes, bytes)) {
            return Optional.of(last.config);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> m = ShareGroupFiles.read(bytes, Map.class);
        ShareGroupConfig config = ShareGroupConfig.parse(m);
        parsedConfigs.put(group, new ParsedConfig(bytes, config));
        return Optional.of(config);
    }

    /**
     * Leases up to {@code maxRecords} records of {@code topic}, from its partitions in turn (each call starts at the
     * next partition, so concurrent consumers spread). Returns at once, possibly with nothing.
     *
     * @throws TierlogException {@code unknown-topic}
     */
    public List<LeasedRecord> lease(String group, String topic, int maxRecords, long leaseMs) {
        return leaseOrWake(group, topic, maxRecords, leaseMs).records();
    }

    /**
     * What {@link #lease} got, and when (epoch ms, by this process's clock) a record of the share-partitions it
     * looked at becomes leasable again without any new request: a lease running out or a redelivery delay ending;
     * {@link Long#MAX_VALUE} when none will. A long-poll that got nothing sleeps until then at most.
     */
    public record Leased(List<LeasedRecord> records, List<LeasedRange> ranges, long wakeAtMs) {
    }

    /**
     * {@link #lease}, with the time a waiting caller should try again and the records as runs under range leases
     * ({@link Leased}).
     */
    public Leased leaseOrWake(String group, String topic, int maxRecords, long leaseMs) {
        List<LeasedRecord> out = new ArrayList<>();
        List<LeasedRange> ranges = new ArrayList<>();
        long wakeAt = leaseOrWake(group, topic, maxRecords, leaseMs,
                (grants, gone) -> readInto(grants, gone, out, ranges)).wakeAtMs();
        return new Leased(out, ranges, wakeAt);
    }

    /**
     * What {@link #leaseOrWake(String, String, int, long, LeaseWriter)} wrote, when to try again ({@link Leased}), and
     * per partition the high watermark the call leased up to, read before it leased there (-1 for a partition it did
     * not visit; a call that wrote nothing visited all): a long-poll waits for appends beyond these, so an append
     * during the call is not missed, without reading every partition's high watermark again.
     */
    public record Delivered(int records, long wakeAtMs, long[] highWatermarks) {
    }

    /**
     * {@link #lease}, handing each share-partition's grants to {@code writer} as soon as they are durable (the service
     * renders the answer from stored batches this way, without a record object per record).
     */
    public Delivered leaseOrWake(String group, String topic, int maxRecords, long leaseMs, LeaseWriter writer) {
        TopicMetadata meta = topics.get(topic);
        ShareGroupConfig config = config(group);
        int n = meta.partitions();
        int first = Math.floorMod(rotation.getAndIncrement(), n);
        int written = 0;
        long[] wakeAt = {Long.MAX_VALUE};
        long[] highWatermarks = new long[n];
        Arrays.fill(highWatermarks, -1);
        for (int i = 0; i < n && written < maxRecords; i++) {
            TopicPartition tp = new TopicPartition(topic, (first + i) % n);
            // Read before taking the partition's commit lock (it may wait on the index catching up); an older high
            // watermark only leases fewer new records.
            highWatermarks[tp.partition()] = records.highWatermark(tp);
            written += leasePartition(group, tp, config, maxRecords - written, leaseMs, highWatermarks[tp.partition()],
                    wakeAt, writer);
        }
        return new Delivered(written, wakeAt[0], highWatermarks);
    }

    /**
     * {@link #leaseOrWake(String, String, int, long, LeaseWriter)} on one share-partition only, for callers that name
     * partitions (Kafka's ShareFetch); {@link Delivered#highWatermarks} has the one entry of {@code tp}.
     *
     * @throws TierlogException {@code unknown-topic}, or {@code unknown-partition}
     */
    public Delivered leaseOrWake(String group, TopicPartition tp, int maxRecords, long leaseMs, LeaseWriter writer) {
        TopicMetadata meta = topics.get(tp.topic());
        meta.requirePartition(tp.partition());
        long[] wakeAt = {Long.MAX_VALUE};
        long[] highWatermarks = new long[meta.partitions()];
        Arrays.fill(highWatermarks, -1);
        highWatermarks[tp.partition()] = records.highWatermark(tp);
        int written = leasePartition(group, tp, config(group), maxRecords, leaseMs, highWatermarks[tp.partition()],
                wakeAt, writer);
        return new Delivered(written, wakeAt[0], highWatermarks);
    }

    /**
     * A future completed when this process next commits an acknowledgement on a share-partition of {@code topic} in
     * {@code group} (a release, or an accept that moves the window, can make records leasable). Take it before
     * leasing so a change during the attempt is not missed; cancel it when no longer waiting (it is then forgotten).
     * Changes made through other processes are not seen: a waiter there also retries on a timer.
     */
    public CompletableFuture<Void> awaitChange(String group, String topic) {
        String key = group + "/" + topic;
        CompletableFuture<Void> f = new CompletableFuture<>();
        java.util.Set<CompletableFuture<Void>> set = waiters.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet());
        set.add(f);
        f.whenComplete((v, e) -> set.remove(f));
        return f;
    }

    /** How many {@link #awaitChange} futures of {@code group} and {@code topic} are waiting (for tests, gauges). */
    public int waiting(String group, String topic) {
        java.util.Set<CompletableFuture<Void>> set = waiters.get(group + "/" + topic);
        return set == null ? 0 : set.size();
    }

    private void changed(String group, String topic) {
        java.util.Set<CompletableFuture<Void>> set = waiters.get(group + "/" + topic);
        if (set != null && !set.isEmpty()) {
            List.copyOf(set).forEach(f -> f.complete(null));
        }
    }

    private int leasePartition(String group, TopicPartition tp, ShareGroupConfig config, int max, long leaseMs,
                               long highWatermark, long[] wakeAt, LeaseWriter writer) {
        record Lease(long incarnation, List<Granted> granted, long wakeAtMs) {
        }
        // A read_committed group leases up to the last stable offset; the caller's long-poll still waits on the high
        // watermark, which the marker that moves the last stable offset moves too.
        long end = config.readCommitted() ? Math.min(records.lastStableOffset(tp), highWatermark) : highWatermark;
        Lease lease;
        List<Granted> granted;
        do { // again while every record granted was in an aborted transaction: committed ones may follow them
            lease = withState(group, tp, config, true, sp -> {
                long now = clock.millis();
                List<Granted> g = sp.lease(now, max, leaseMs, end, maxInFlight);
                return new Lease(sp.state().incarnation, g,
                        g.size() < max ? sp.nextLeasableAtMs(now, graceMs) : Long.MAX_VALUE);
            });
            if (lease != null) {
                wakeAt[0] = Math.min(wakeAt[0], lease.wakeAtMs);
            }
            if (lease == null || lease.granted.isEmpty()) {
                return 0;
            }
            granted = config.readCommitted()
                    ? withoutAborted(group, tp, config, lease.incarnation, lease.granted) : lease.granted;
        } while (granted.isEmpty());
        LeaseGrants grants = new LeaseGrants(group, tp, lease.incarnation, granted);
        BitSet gone = new BitSet(grants.size());
        int missing = writer.write(grants, gone);
        int redeliveries = 0;
        for (int i = 0; i < grants.size(); i++) {
            redeliveries += !gone.get(i) && grants.deliveryCount(i) > 1 ? 1 : 0;
        }
        if (missing > 0) {
            passOver(group, tp, config, grants, gone);
        }
        meters.leased(grants.size() - missing, redeliveries);
        return grants.size() - missing;
    }

    /**
     * A read_committed group's grants without the records of aborted transactions, which are passed over (done, never
     * delivered: Kafka archives them), as records removed by compaction are.
     */
    private List<Granted> withoutAborted(String group, TopicPartition tp, ShareGroupConfig config, long incarnation,
                                         List<Granted> granted) {
        LeaseGrants all = new LeaseGrants(group, tp, incarnation, granted);
        List<OffsetRange> aborted = records.abortedBatches(tp, all.firstOffset(), all.lastOffset() + 1);
        if (aborted.isEmpty()) {
            return granted;
        }
        BitSet inAborted = new BitSet(all.size());
        List<Granted> kept = new ArrayList<>(granted.size());
        int r = 0;
        for (int i = 0; i < all.size(); i++) {
            long offset = all.offset(i);
            while (r < aborted.size() && aborted.get(r).last() < offset) {
                r++;
            }
            if (r < aborted.size() && aborted.get(r).contains(offset)) {
                inAborted.set(i);
            } else {
                kept.add(granted.get(i));
            }
        }
        if (!inAborted.isEmpty()) {
            passOver(group, tp, config, all, inAborted);
        }
        return kept;
    }

    /** Marks leased records that no longer exist as done, so they hold no place in the window. */
    private void passOver(String group, TopicPartition tp, ShareGroupConfig config, LeaseGrants grants, BitSet gone) {
        withState(group, tp, config, false, sp -> {
            if (sp.state().incarnation == grants.incarnation()) {
                long now = clock.millis();
                gone.stream().forEach(i -> sp.ack(now, grants.offset(i), grants.deliveryCount(i), AckType.ACCEPT,
                        config));
            }
            return null;
        });
    }

    /** The {@link LeaseWriter} of {@link #lease}: records read through {@link ShareRecords}, as objects. */
    private int readInto(LeaseGrants grants, BitSet gone, List<LeasedRecord> out, List<LeasedRange> ranges) {
        TopicPartition tp = grants.tp();
        Map<Long, LogRecord> byOffset = new TreeMap<>();
        long next = grants.firstOffset();
        long hi = grants.lastOffset();
        while (next <= hi) {
            List<LogRecord> batch = records.read(tp, next, (int) Math.min(hi - next + 1, 10_000));
            if (batch.isEmpty()) {
                break;
            }
            for (LogRecord r : batch) {
                byOffset.put(r.offset(), r);
            }
            next = batch.get(batch.size() - 1).offset() + 1;
        }
        int missing = 0;
        for (int i = 0; i < grants.size(); i++) {
            LogRecord r = byOffset.get(grants.offset(i));
            if (r == null) {
                gone.set(i); // removed by compaction or retention since: nothing to deliver
                missing++;
            } else {
                out.add(new LeasedRecord(grants.lease(i), tp.partition(), grants.deliveryCount(i),
                        grants.leaseUntilMs(i), r));
            }
        }
        BitSet present = new BitSet(grants.size());
        present.set(0, grants.size());
        present.andNot(gone);
        for (int i = present.nextSetBit(0), j; i >= 0; i = present.nextSetBit(j + 1)) {
            j = grants.runEnd(i, present);
            ranges.add(new LeasedRange(new String(grants.rangeLeaseAscii(i, j), StandardCharsets.US_ASCII),
                    tp.partition(), grants.offset(i), grants.offset(j), grants.deliveryCount(i)));
        }
        return missing;
    }

    /**
     * Applies acknowledgements of records of {@code topic}, in order; one result per ack, in the same order. An ack
     * of a range lease ({@link RangeLease}, ADR 0042), narrowed or not, applies to every record of its run or to none.
     *
     * @throws TierlogException {@code bad-request} naming {@code acks[i].lease} for a lease string this service did
     *                          not hand out for this group and topic, or {@code acks[i].firstOffset} /
     *                          {@code acks[i].lastOffset} for a narrowing outside the lease's run (nothing is applied)
     */
    public List<AckResult> acknowledge(String group, String topic, List<Ack> acks) {
        TopicMetadata meta = topics.get(topic);
        Map<Integer, List<Integer>> byPartition = new TreeMap<>();
        List<RangeLease> ids = new ArrayList<>(acks.size());
        for (int i = 0; i < acks.size(); i++) {
            int index = i;
            Ack ack = acks.get(i);
            RangeLease id = LeaseId.parse(ack.lease(), false)
                    .filter(l -> l.group().equals(group) && l.topic().equals(topic))
                    .filter(l -> l.partition() >= 0 && l.partition() < meta.partitions())
                    .orElseThrow(() -> new TierlogException(ErrorType.BAD_REQUEST, "acks[" + index + "].lease is not a "
                            + "lease of share group " + group + " on topic " + topic, Map.of("field",
                            "acks[" + index + "].lease")));
            ids.add(narrowed(id, ack, i));
            byPartition.computeIfAbsent(id.partition(), p -> new ArrayList<>()).add(i);
        }
        ShareGroupConfig config = config(group);
        AckResult[] results = new AckResult[acks.size()];
        for (Map.Entry<Integer, List<Integer>> e : byPartition.entrySet()) {
            TopicPartition tp = new TopicPartition(topic, e.getKey());
            List<AckResult> partResults = withState(group, tp, config, false, sp -> {
                long now = clock.millis();
                List<AckResult> rs = new ArrayList<>(e.getValue().size());
                List<Archived> archived = new ArrayList<>();
                for (int i : e.getValue()) {
                    RangeLease id = ids.get(i);
                    Ack ack = acks.get(i);
                    if (id.incarnation() != sp.state().incarnation) {
                        rs.add(AckResult.expired(ack));
                    } else if (id.firstOffset() == id.lastOffset()) {
                        SharePartition.AckOutcome o = sp.ack(now, id.firstOffset(), id.deliveryCount(), ack.type(),
                                config);
                        rs.add(o.ok() ? AckResult.ok(ack) : AckResult.expired(ack));
                        if (o.archived() != null) {
                            archived.add(o.archived());
                        }
                    } else {
                        boolean ok = sp.ackRange(now, id.firstOffset(), id.lastOffset(), id.deliveryCount(), ack.type(),
                                config, archived);
                        rs.add(ok ? AckResult.ok(ack) : AckResult.expired(ack));
                    }
                }
                addDeadLetters(tp, sp.state(), archived, config);
                return rs;
            });
            for (int k = 0; k < e.getValue().size(); k++) {
                int i = e.getValue().get(k);
                results[i] = partResults == null ? AckResult.expired(acks.get(i)) : partResults.get(k);
            }
        }
        return Arrays.asList(results);
    }

    /** The run an ack covers: its lease's run, narrowed by the ack's offsets (each inside the run, first <= last). */
    private static RangeLease narrowed(RangeLease id, Ack ack, int index) {
        long first = ack.firstOffset() != null ? ack.firstOffset() : id.firstOffset();
        long last = ack.lastOffset() != null ? ack.lastOffset() : id.lastOffset();
        if (first < id.firstOffset() || first > id.lastOffset()) {
            throw badNarrowing(index, "firstOffset", "must be within the lease's offsets [" + id.firstOffset() + ", "
                    + id.lastOffset() + "]: " + first);
        }
        if (last < id.firstOffset() || last > id.lastOffset()) {
            throw badNarrowing(index, "lastOffset", "must be within the lease's offsets [" + id.firstOffset() + ", "
                    + id.lastOffset() + "]: " + last);
        }
        if (first > last) {
            throw badNarrowing(index, "lastOffset", "must not be below firstOffset " + first + ": " + last);
        }
        if (first == id.firstOffset() && last == id.lastOffset()) {
            return id;
        }
        return new RangeLease(id.group(), id.topic(), id.partition(), first, last, id.incarnation(),
                id.deliveryCount(), id.ranged());
    }

    private static TierlogException badNarrowing(int index, String name, String why) {
        String field = "acks[" + index + "]." + name;
        return new TierlogException(ErrorType.BAD_REQUEST, field + " " + why, Map.of("field", field));
    }

    /**
     * One locked read-modify-write of a share-partition: produces pending dead letters left by a crash, settles
     * (retention, lease expiry), runs {@code change}, writes the state if it changed, then produces the dead letters
     * it added and writes again. Without {@code create}, a share-partition with no state answers null.
     *
     * <p>Group commit: concurrent calls on one share-partition in this process queue their changes; whichever holds
     * the partition's commit lock applies every queued change in one locked read-modify-write, so many leases and
     * acks share one fsynced write. Each change still sees the state left by the one before it, and each caller
     * returns only once the write holding its change is durable.
     */
    private <T> T withState(String group, TopicPartition tp, ShareGroupConfig config, boolean create,
                            Function<SharePartition, T> change) {
        PartitionCommits slot = commits.computeIfAbsent(group + "/" + tp,
                k -> new PartitionCommits(files.partition(group, tp)));
        Change<T> mine = new Change<>(config, create, change);
        slot.pending.add(mine);
        slot.lock.lock();
        try {
            if (!mine.done) {
                List<Change<?>> batch = new ArrayList<>();
                for (Change<?> c; (c = slot.pending.poll()) != null; ) {
                    batch.add(c);
                }
                commit(group, tp, slot, batch);
            }
        } finally {
            slot.lock.unlock();
        }
        if (mine.failure != null) {
            throw mine.failure;
        }
        return mine.result;
    }

    /** A change queued for the next commit of a share-partition; the fields after it are set by the committer. */
    private static final class Change<T> {
        final ShareGroupConfig config;
        final boolean create;
        final Function<SharePartition, T> change;
        boolean done;
        T result;
        RuntimeException failure;

        Change(ShareGroupConfig config, boolean create, Function<SharePartition, T> change) {
            this.config = config;
            this.create = create;
            this.change = change;
        }

        void apply(SharePartition sp) {
            result = sp == null ? null : change.apply(sp);
        }
    }

    /**
     * A share-partition's group commit in this process: the lock whose holder commits, the changes waiting, and the
     * state log, which keeps the state as this process last read or wrote it ({@link ShareStateLog}).
     */
    private static final class PartitionCommits {
        final ReentrantLock lock = new ReentrantLock();
        final ConcurrentLinkedQueue<Change<?>> pending = new ConcurrentLinkedQueue<>();
        final ShareStateLog log;

        PartitionCommits(ShareStateLog log) {
            this.log = log;
        }
    }

    /** Signals that a share-partition's commit failed after its state was durably written (no change is re-run). */
    private static final class WrittenThenFailed extends RuntimeException {
        WrittenThenFailed(RuntimeException cause) {
            super(cause);
        }
    }

    /**
     * Commits {@code batch} in one read-modify-write. If a change fails before anything is written, nothing of the
     * batch is kept and each change is committed on its own, so one failing change fails only its own caller.
     */
    private void commit(String group, TopicPartition tp, PartitionCommits slot, List<Change<?>> batch) {
        try {
            commitOnce(group, tp, slot, batch);
        } catch (WrittenThenFailed e) {
            batch.forEach(c -> c.failure = (RuntimeException) e.getCause());
        } catch (RuntimeException e) {
            if (batch.size() == 1) {
                batch.get(0).failure = e;
            } else {
                for (Change<?> c : batch) {
                    commit(group, tp, slot, List.of(c));
                }
            }
        }
        batch.forEach(c -> c.done = true);
        if (batch.stream().anyMatch(c -> !c.create)) {
            changed(group, tp.topic()); // acks (and pass-overs) may have made records leasable
        }
    }

    private void commitOnce(String group, TopicPartition tp, PartitionCommits slot, List<Change<?>> batch) {
        ShareGroupConfig config = batch.get(0).config;
        slot.log.update(session -> {
            SharePartitionState state = session.read(); // the log keeps it again once written unchanged
            boolean settled = false;
            boolean changesWritten = false;
            SharePartition sp = null;
            try {
                for (Change<?> c : batch) {
                    if (state == null && c.create) {
                        state = newState(tp, c.config);
                    }
                    if (state != null && !settled) {
                        sp = new SharePartition(state);
                        flushDeadLetters(group, tp, state, session);
                        sp.skipTo(records.logStartOffset(tp));
                        addDeadLetters(tp, state, sp.expire(clock.millis(), graceMs, config.maxDeliveryAttempts()),
                                config);
                        settled = true;
                    }
                    c.apply(sp);
                }
                if (state == null) {
                    return null;
                }
                session.write(state);
                changesWritten = true;
                if (!state.deadLetters.isEmpty()) {
                    flushDeadLetters(group, tp, state, session);
                }
            } catch (RuntimeException e) {
                throw changesWritten ? new WrittenThenFailed(e) : e;
            }
            long now = clock.millis();
            snapshots.put(group + "/" + tp, new Snapshot(group, tp, state.startOffset, state.endOffset,
                    sp.available(now), sp.leased()));
            return null;
        });
    }

    private SharePartitionState newState(TopicPartition tp, ShareGroupConfig config) {
        SharePartitionState state = new SharePartitionState();
        state.incarnation = random.nextLong() & Long.MAX_VALUE;
        // "latest" for a read_committed group is where its reads end (as Kafka's ListOffsets at read_committed).
        state.startOffset = "earliest".equals(config.start()) ? records.logStartOffset(tp)
                : config.readCommitted() ? records.lastStableOffset(tp) : records.highWatermark(tp);
        state.endOffset = state.startOffset;
        return state;
    }


    /** Fixes each archived record's dead-letter partition and producer sequence (the key picks the partition). */
    private void addDeadLetters(TopicPartition tp, SharePartitionState state, List<Archived> archived,
                                ShareGroupConfig config) {
        if (archived.isEmpty() || config.deadLetterTopic() == null) {
            return;
        }
        Optional<TopicMetadata> dlq = topics.find(config.deadLetterTopic());
        if (dlq.isEmpty()) {
            LOG.log(System.Logger.Level.WARNING, "dead-letter topic {0} does not exist: {1} records of {2} dropped",
                    config.deadLetterTopic(), archived.size(), tp);
            return;
        }
        int partitions = dlq.get().partitions();
        for (Archived a : archived) {
            List<LogRecord> r = records.read(tp, a.offset(), 1);
            if (r.isEmpty() || r.get(0).offset() != a.offset()) {
                continue; // removed by retention or compaction meanwhile: nothing to dead-letter
            }
            byte[] key = r.get(0).key();
            DeadLetter d = new DeadLetter();
            d.offset = a.offset();
            d.reason = a.reason();
            d.deliveryCount = a.deliveryCount();
            d.topic = config.deadLetterTopic();
            d.partition = key != null ? Partitioner.forKey(key, partitions) : (int) Math.floorMod(a.offset(), partitions);
            d.sequence = state.deadLetterSequences.getOrDefault(d.partition, 0);
            state.deadLetterSequences.put(d.partition, d.sequence + 1);
            state.deadLetters.add(d);
        }
    }

    /** Produces the pending dead letters in order, then writes the state without them. */
    private void flushDeadLetters(String group, TopicPartition tp, SharePartitionState state,
                                  ShareStateLog.Session session) {
        if (state.deadLetters.isEmpty()) {
            return;
        }
        String producerId = "tierlog-share-" + group + "-" + tp.topic() + "-" + tp.partition() + "-" + state.incarnation;
        int produced = 0;
        while (!state.deadLetters.isEmpty()) {
            DeadLetter d = state.deadLetters.get(0);
            List<LogRecord> r = records.read(tp, d.offset, 1);
            if (!r.isEmpty() && r.get(0).offset() == d.offset) {
                try {
                    ingest.produce(d.topic, new ProduceRequest(List.of(deadLetterRecord(tp, r.get(0), d)),
                            Optional.of(new ProducerRef(producerId, 0, d.sequence))));
                    produced++;
                } catch (TierlogException e) {
                    if (e.type() != ErrorType.UNKNOWN_TOPIC && e.type() != ErrorType.UNKNOWN_PARTITION) {
                        session.write(state);
                        throw e;
                    }
                    LOG.log(System.Logger.Level.WARNING, "dead-letter topic {0} is gone: record {1} of {2} dropped",
                            d.topic, d.offset, tp);
                }
            }
            state.deadLetters.remove(0);
        }
        session.write(state);
        meters.deadLettered(produced);
    }

    private static ProduceRecord deadLetterRecord(TopicPartition tp, LogRecord r, DeadLetter d) {
        List<Header> headers = new ArrayList<>(r.headers());
        headers.add(header("tierlog.dlq.topic", tp.topic()));
        headers.add(header("tierlog.dlq.partition", Integer.toString(tp.partition())));
        headers.add(header("tierlog.dlq.offset", Long.toString(d.offset)));
        headers.add(header("tierlog.dlq.reason", d.reason));
        headers.add(header("tierlog.dlq.delivery-count", Integer.toString(d.deliveryCount)));
        return new ProduceRecord(r.key(), r.value(), headers, d.partition, null);
    }

    private static Header header(String name, String value) {
        return new Header(name, value.getBytes(StandardCharsets.UTF_8));
    }

    /** The group as it stands, or empty when it has neither a config nor any share-partition. */
    public Optional<ShareDescription> describe(String group) {
        Optional<ShareGroupConfig> stored = storedConfig(group);
        Map<String, List<Integer>> parts = files.partitions(group);
        if (stored.isEmpty() && parts.isEmpty()) {
            return Optional.empty();
        }
        ShareGroupConfig config = stored.orElse(ShareGroupConfig.DEFAULTS);
        long now = clock.millis();
        List<ShareDescription.Topic> out = new ArrayList<>();
        for (Map.Entry<String, List<Integer>> t : parts.entrySet()) {
            List<ShareDescription.Partition> ps = new ArrayList<>();
            for (int p : t.getValue()) {
                TopicPartition tp = new TopicPartition(t.getKey(), p);
                SharePartitionState state = files.partition(group, tp).readUnlocked();
                if (state == null) {
                    continue;
                }
                SharePartition sp = new SharePartition(state);
                long hw;
                try {
                    sp.skipTo(records.logStartOffset(tp));
                    hw = records.highWatermark(tp);
                } catch (TierlogException gone) {
                    hw = sp.state().endOffset; // the topic was deleted: show the state as it was left
                }
                sp.expire(now, graceMs, config.maxDeliveryAttempts()); // a copy: only for the counts
                ps.add(new ShareDescription.Partition(p, sp.state().startOffset, sp.available(now), sp.leased(),
                        sp.lag(hw)));
            }
            out.add(new ShareDescription.Topic(t.getKey(), ps));
        }
        return Optional.of(new ShareDescription(group, config, out));
    }

    /**
     * Removes the group's config and every share-partition state; outstanding leases die with it (a later group of
     * the same name has other incarnations). Returns false when there was nothing to remove.
     */
    public boolean delete(String group) {
        boolean existed = deleteStateAndConfig(group);
        // Its Kafka share consumers' membership goes too (they rejoin a new group at their next heartbeat).
        existed |= files.members(group).update(s -> {
            boolean had = s.read() != null;
            s.delete();
            return had;
        });
        return existed;
    }

    /**
     * The group's share-partitions' state and its config, not its membership: for
     * {@link ShareGroupMembers#deleteWhileEmpty}, which holds the members lock around this. Whether there was any.
     */
    public boolean deleteStateAndConfig(String group) {
        boolean existed = false;
        for (Map.Entry<String, List<Integer>> t : files.partitions(group).entrySet()) {
            for (int p : t.getValue()) {
                existed |= deletePartition(group, new TopicPartition(t.getKey(), p));
            }
        }
        existed |= files.config(group).update(s -> {
            boolean had = s.read() != null;
            s.delete();
            return had;
        });
        parsedConfigs.remove(group);
        return existed;
    }

    /**
     * Moves the share-partition's start offset to {@code offset} and forgets everything in flight above and below it
     * (Kafka's AlterShareGroupOffsets): records leased, waiting for redelivery or done are delivered again from
     * {@code offset} on, with delivery counts from zero. Creates the share-partition if the group had none. The
     * state gets a new incarnation, so a lease handed out before dies with the old window (its ack answers
     * lease-expired) instead of accepting a record delivered anew. Pending dead letters are produced first, under
     * the old incarnation's producer id. An offset below the log start moves up to it at the next call, as
     * retention moves a start offset; one beyond the high watermark waits until records reach it (Kafka checks
     * neither; ADR 0054). Durable before it returns, for every process on the volume.
     *
     * @throws TierlogException {@code unknown-topic}, {@code unknown-partition}, or {@code bad-request} for a negative
     *                          offset
     */
    public void resetStart(String group, TopicPartition tp, long offset) {
        topics.get(tp.topic()).requirePartition(tp.partition());
        if (offset < 0) {
            throw new TierlogException(ErrorType.BAD_REQUEST, "a share-partition's start offset must not be negative: "
                    + offset, Map.of("field", "startOffset"));
        }
        PartitionCommits slot = commits.computeIfAbsent(group + "/" + tp,
                k -> new PartitionCommits(files.partition(group, tp)));
        slot.lock.lock(); // this process's queued leases and acks commit after the reset, on the new state
        try {
            slot.log.update(session -> {
                SharePartitionState old = session.read();
                long incarnation = random.nextLong() & Long.MAX_VALUE;
                if (old != null) {
                    flushDeadLetters(group, tp, old, session);
                    while (incarnation == old.incarnation) {
                        incarnation = random.nextLong() & Long.MAX_VALUE;
                    }
                }
                SharePartitionState fresh = new SharePartitionState();
                fresh.incarnation = incarnation;
                fresh.startOffset = offset;
                fresh.endOffset = offset;
                session.replace(fresh); // an update frame carries neither an incarnation nor a window moved back
                return null;
            });
        } finally {
            slot.lock.unlock();
        }
        snapshots.put(group + "/" + tp, new Snapshot(group, tp, offset, offset, 0, 0));
        changed(group, tp.topic()); // a waiting lease may find records from the new start
    }

    /**
     * Removes the group's state of every partition of {@code topic} (Kafka's DeleteShareGroupOffsets): the next
     * lease there starts where the group's {@code start} config says, as on a partition the group never touched.
     * Outstanding leases of those share-partitions die with them. Returns false when there was nothing to remove.
     */
    public boolean deleteTopic(String group, String topic) {
        boolean existed = false;
        for (int p : files.partitions(group).getOrDefault(topic, List.of())) {
            existed |= deletePartition(group, new TopicPartition(topic, p));
        }
        return existed;
    }

    /** Deletes one share-partition's state file (through this process's open log of it, if any); whether it had one. */
    private boolean deletePartition(String group, TopicPartition tp) {
        PartitionCommits slot = commits.get(group + "/" + tp);
        ShareStateLog log = slot != null ? slot.log : files.partition(group, tp);
        boolean existed = log.update(s -> {
            boolean had = s.read() != null;
            s.delete();
            return had;
        });
        snapshots.remove(group + "/" + tp);
        return existed;
    }

    /** The share groups with a config, members or share-partition state stored, by name. */
    public List<String> groups() {
        return files.groups();
    }

    /** What this process last saw of each share-partition it served (for gauges). */
    public List<Snapshot> snapshots() {
        return List.copyOf(snapshots.values());
    }
}
