package io.tierlog.client;

import com.fasterxml.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * Reads records from partitions, either chosen by hand ({@link #assign}) or given by a consumer group
 * ({@link #subscribe}), across the hot and the cold tier alike.
 *
 * <h2>Polling</h2>
 * {@link #poll} keeps one fetch in flight per partition (Kafka record batches, or JSON for partitions holding
 * batches in a codec the client cannot read), each on a blocking connection on a fetch thread, and returns as soon
 * as any of them brought records. Fetches run ahead of the caller: a partition's next fetch (from where its fetched
 * records end) starts, on the fetch thread, as soon as the previous one answered while the partition has fewer than
 * two fetches' worth of records buffered, so it runs while the caller processes what poll returned (Kafka's consumer
 * prefetches the same way); records are buffered at most about three fetches deep per partition. At a partition's
 * end a fetch long-polls (up to {@code fetchMaxWait}), so a new record arrives without busy polling. A partition's
 * position is the offset after the last record {@code poll} returned; it starts at the committed offset of the
 * group, else at {@code autoOffsetReset}, and a position that fell out of the log (retention) is reset the same way.
 *
 * <h2>Groups</h2>
 * A background thread heartbeats ({@link GroupMembership}); assignment changes are applied inside {@code poll},
 * on the caller's thread, in this order for a revoked partition: auto-commit of its position (if on), then
 * {@link RebalanceListener#onPartitionsRevoked}, then it is dropped and the service is told. So with auto-commit or
 * a commit in the callback, the next owner starts where this one stopped (at-least-once: records returned but not
 * yet processed when the position was committed are not re-read; records processed after the last commit are).
 * Commits carry the member id and epoch; a commit for a partition the member no longer owns is refused
 * ({@code 409 fenced-member}).
 *
 * <p>Not thread-safe, as Kafka's consumer: one thread polls, commits and seeks. Close it to leave the group: with auto-commit it commits its positions, then {@link RebalanceListener#onPartitionsRevoked} runs for what it owns, then it leaves.
 */
public final class Consumer implements AutoCloseable {
    private final HttpTransport http;
    private final ConsumerConfig config;
    private final Admin admin;
    private final LinkedBlockingQueue<Object> wake = new LinkedBlockingQueue<>();
    /** The most fetches one chain made (a test's view of {@link #runChain}). */
    private final AtomicInteger longestChain = new AtomicInteger();
    private final Map<TopicPartition, PartitionState> active = new TreeMap<>();
    private final ExecutorService commits;
    /** Runs each fetch (a blocking exchange, possibly long-polling) and decodes its answer; a thread per fetch in flight. */
    private final ExecutorService fetchThreads;
    private GroupMembership membership;
    private RebalanceListener listener = new RebalanceListener() { };
    private long nextAutoCommitNanos;
    private long positionsRetryAtNanos;
    private int positionFailures;
    private Map<TopicPartition, Long> lastCommitted = Map.of();
    private boolean closed;
    private int drainStart;

    Consumer(HttpTransport http, ConsumerConfig config) {
        this.http = http;
        this.config = config;
        this.admin = new Admin(http);
        this.commits = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "tierlog-consumer-commit");
            t.setDaemon(true);
            return t;
        });
        this.fetchThreads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "tierlog-consumer-fetch");
            t.setDaemon(true);
            return t;
        });
        this.nextAutoCommitNanos = System.nanoTime() + config.autoCommitInterval().toNanos();
    }

    /** Joins {@code config.groupId()} for {@code topics}; the service assigns partitions from the next poll on. */
    public void subscribe(Collection<String> topics, RebalanceListener listener) {
        ensureOpen();
        if (config.groupId() == null) {
            throw new IllegalStateException("subscribe needs a groupId in the ConsumerConfig");
        }
        if (membership != null || !active.isEmpty()) {
            throw new IllegalStateException("already subscribed or assigned");
        }
        this.listener = listener == null ? new RebalanceListener() { } : listener;
        this.membership = new GroupMembership(http, config.groupId(), List.copyOf(topics), config.clientId(),
                config.sessionTimeout(), () -> wake.offer(Boolean.TRUE));
    }

    public void subscribe(Collection<String> topics) {
        subscribe(topics, null);
    }

    /** Consumes exactly these partitions (no group membership); positions of partitions kept are kept. */
    public void assign(Collection<TopicPartition> partitions) {
        ensureOpen();
        if (membership != null) {
            throw new IllegalStateException("subscribed to a group: the group assigns");
        }
        Set<TopicPartition> keep = Set.copyOf(partitions);
        active.forEach((tp, s) -> {
            if (!keep.contains(tp)) {
                s.abandon();
            }
        });
        active.keySet().retainAll(keep);
        partitions.forEach(tp -> active.computeIfAbsent(tp, PartitionState::new));
    }

    /** The partitions this consumer consumes now. */
    public Set<TopicPartition> assignment() {
        return Set.copyOf(active.keySet());
    }

    /**
     * Records from the consumed partitions: waits up to {@code timeout} for the first ones, returns at most
     * {@code maxPollRecords}. Applies assignment changes and auto-commits first.
     *
     * @throws ProblemException for a fetch error that is not retried (e.g. {@code unknown-topic}), or
     *                          {@code offset-out-of-range} with {@code autoOffsetReset = NONE}
     */
    public List<ConsumerRecord> poll(Duration timeout) {
        ensureOpen();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            reconcile();
            maybeAutoCommit();
            collect();
            List<ConsumerRecord> out = drain();
            if (!out.isEmpty()) {
                // Prefetch: the next fetch of every drained partition is in flight while the caller processes these.
                startFetches(config.fetchMaxWait().toMillis());
                return out;
            }
            initPositions();
            long left = deadline - System.nanoTime();
            startFetches(Math.max(0, TimeUnit.NANOSECONDS.toMillis(left)));
            if (left <= 0) {
                return List.of();
            }
            long wait = Math.min(left, TimeUnit.SECONDS.toNanos(1));
            if (membership != null && !active.isEmpty()) {
                wait = Math.max(0, Math.min(wait, membership.nanosToSessionEnd() + 1_000_000)); // wake for the session's end
            }
            try {
                Object signal = wake.poll(wait, TimeUnit.NANOSECONDS);
                if (signal != null) {
                    wake.clear();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TierlogException("interrupted", e);
            }
        }
    }

    /** Partitions with a fetch in flight or answered and not yet taken in (a test's view of the prefetch). */
    int fetchesInFlight() {
        return (int) active.values().stream().filter(s -> s.chain != null
                && (s.chain.running || !s.chain.ready.isEmpty())).count();
    }

    /**
     * Records fetched and not yet returned by poll, also those answered and not yet taken in by a poll (a test's view
     * of the fetch threads' progress; called from the polling thread).
     */
    int fetchedAhead() {
        int n = 0;
        for (PartitionState s : active.values()) {
            n += s.bufferedCount;
            if (s.chain != null) {
                for (FetchResult r : s.chain.ready) {
                    n += r.fetched() == null ? 0 : r.fetched().records().remaining();
                }
            }
        }
        return n;
    }

    /** The most fetches one chain made one after the other on its fetch thread (a test's view of the prefetch). */
    int longestChain() {
        return longestChain.get();
    }

    /** Records fetched and not yet returned by poll (a test's view of the prefetch). */
    int bufferedRecords() {
        return active.values().stream().mapToInt(s -> s.bufferedCount).sum();
    }

    // ---- positions and seeking

    /** The offset of the next record {@code poll} will return for {@code tp}; null before it is known. */
    public Long position(TopicPartition tp) {
        return state(tp).position;
    }

    public void seek(TopicPartition tp, long offset) {
        PartitionState s = state(tp);
        s.reset(offset);
    }

    public void seekToBeginning(Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> seek(tp, admin.earliestOffset(tp.topic(), tp.partition())));
    }

    public void seekToEnd(Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> seek(tp, latestOffset(tp)));
    }

    /** To the first record with a timestamp {@code >= timestamp} (the end if there is none). */
    public void seekToTimestamp(TopicPartition tp, long timestamp) {
        seek(tp, admin.offsetForTimestamp(tp.topic(), tp.partition(), timestamp));
    }

    // ---- commits

    /** Commits the positions of every consumed partition. */
    public void commitSync() {
        commitSync(positions());
    }

    /**
     * Commits {@code offsets} (each the next offset to read) for the group, as its current member if subscribed.
     *
     * @throws ProblemException {@code fenced-member} when a partition is no longer this member's
     */
    public void commitSync(Map<TopicPartition, Long> offsets) {
        ensureOpen();
        if (config.groupId() == null) {
            throw new IllegalStateException("commit needs a groupId in the ConsumerConfig");
        }
        if (offsets.isEmpty()) {
            return;
        }
        String memberId = membership == null ? null : membership.memberId();
        int epoch = membership == null ? 0 : membership.memberEpoch();
        http.call("PUT", "/v1/groups/" + Admin.path(config.groupId()) + "/offsets",
                Admin.offsetsBody(offsets, memberId, epoch), true);
    }

    /** Commits the current positions on another thread; {@code callback} (may be null) runs on it afterwards. */
    public CompletableFuture<Map<TopicPartition, Long>> commitAsync(
            BiConsumer<Map<TopicPartition, Long>, Throwable> callback) {
        Map<TopicPartition, Long> offsets = positions();
        CompletableFuture<Map<TopicPartition, Long>> done = CompletableFuture.supplyAsync(() -> {
            commitSync(offsets);
            return offsets;
        }, commits);
        if (callback != null) {
            done.whenComplete((o, e) -> callback.accept(offsets, e));
        }
        return done;
    }

    /** Leaves the group (after a last commit with auto-commit on) and stops the background threads. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            if (config.autoCommit() && config.groupId() != null && membership != null) {
                try {
                    commitSync();
                } catch (TierlogException lostAlready) {
                    // the partitions went to another member; it resumes from the last accepted commit
                }
            }
            if (membership != null && !active.isEmpty()) {
                // Leaving revokes everything, before the service hears of it (Kafka's consumer does the same).
                listener.onPartitionsRevoked(new TreeSet<>(active.keySet()));
            }
        } finally {
            closed = true;
            if (membership != null) {
                membership.close();
            }
            commits.shutdown();
            active.values().forEach(PartitionState::abandon);
            fetchThreads.shutdown(); // a fetch still long-polling ends by itself, unread
        }
    }

    // ---- the poll loop's steps

    private void reconcile() {
        if (membership == null) {
            return;
        }
        membership.checkSession();
        if (membership.takeLost()) {
            Set<TopicPartition> lost = new TreeSet<>(active.keySet());
            active.values().forEach(PartitionState::abandon);
            active.clear();
            membership.owned(Set.of());
            if (!lost.isEmpty()) {
                listener.onPartitionsLost(lost);
            }
        }
        Set<TopicPartition> target = membership.assignment();
        Set<TopicPartition> revoked = new TreeSet<>(active.keySet());
        revoked.removeAll(target);
        if (!revoked.isEmpty()) {
            if (config.autoCommit()) {
                Map<TopicPartition, Long> last = new TreeMap<>(positions());
                last.keySet().retainAll(revoked);
                try {
                    commitSync(last);
                } catch (TierlogException e) {
                    // fenced meanwhile: the next owner re-reads from the previous commit (at-least-once holds)
                }
            }
            listener.onPartitionsRevoked(revoked);
            revoked.forEach(tp -> active.get(tp).abandon());
            active.keySet().removeAll(revoked);
        }
        Set<TopicPartition> added = new TreeSet<>(target);
        added.removeAll(active.keySet());
        added.forEach(tp -> active.put(tp, new PartitionState(tp)));
        if (!revoked.isEmpty() || !added.isEmpty()) {
            membership.owned(active.keySet());
        }
        if (!added.isEmpty()) {
            listener.onPartitionsAssigned(added);
        }
    }

    private void maybeAutoCommit() {
        if (!config.autoCommit() || config.groupId() == null || membership == null
                || System.nanoTime() < nextAutoCommitNanos) {
            return;
        }
        nextAutoCommitNanos = System.nanoTime() + config.autoCommitInterval().toNanos();
        Map<TopicPartition, Long> now = positions();
        if (now.equals(lastCommitted)) {
            return;
        }
        try {
            commitSync(now);
            lastCommitted = now;
        } catch (TierlogException e) {
            // a fenced or failed auto-commit is retried at the next interval; records may then be re-read
        }
    }

    /**
     * Positions for partitions that have none: the group's committed offsets, else {@code autoOffsetReset}. When the
     * service cannot answer now (no answer, 429, 5xx) they stay unknown and are asked again after a backoff: a
     * passing outage must not end the poll loop.
     */
    private void initPositions() {
        List<PartitionState> missing = active.values().stream().filter(s -> s.position == null).toList();
        if (missing.isEmpty() || System.nanoTime() < positionsRetryAtNanos) {
            return;
        }
        try {
            Map<TopicPartition, Long> committed = config.groupId() == null ? Map.of()
                    : admin.groupOffsets(config.groupId());
            for (PartitionState s : missing) {
                Long c = committed.get(s.tp);
                s.reset(c != null ? c : resetOffset(s.tp));
            }
            positionFailures = 0;
        } catch (UnavailableException | ProblemException e) {
            if (e instanceof ProblemException p && !p.retriable()) {
                throw p;
            }
            positionsRetryAtNanos = System.nanoTime()
                    + TimeUnit.MILLISECONDS.toNanos(http.backoff().delayMillis(positionFailures++, -1));
        }
    }

    private long resetOffset(TopicPartition tp) {
        return switch (config.autoOffsetReset()) {
            case EARLIEST -> admin.earliestOffset(tp.topic(), tp.partition());
            case LATEST -> latestOffset(tp);
            case NONE -> throw new TierlogException("no committed offset for " + tp + " and autoOffsetReset is NONE");
        };
    }

    /** The end of what this consumer reads: the last stable offset at read_committed, as a Kafka consumer's. */
    private long latestOffset(TopicPartition tp) {
        return config.isolation() == ConsumerConfig.Isolation.READ_COMMITTED
                ? admin.lastStableOffset(tp.topic(), tp.partition())
                : admin.latestOffset(tp.topic(), tp.partition());
    }

    /** Records one fetch asks for at most. */
    private int fetchMaxRecords() {
        return Math.min(10_000, Math.max(500, config.maxPollRecords()));
    }

    /** Records buffered per partition (taken in and fetched ahead) up to which the next fetch starts. */
    private int aheadRecords() {
        return 2 * fetchMaxRecords();
    }

    private void startFetches(long waitMs) {
        long now = System.nanoTime();
        long wait = Math.min(waitMs, config.fetchMaxWait().toMillis());
        for (PartitionState s : active.values()) {
            // Fetches run ahead: the next one starts before the buffer is empty, so the caller never waits for a round
            // trip while the service could have been answering (measured: with a fetch only after the buffer was
            // drained, fewer fetches than partitions were in flight and reads ran at a fraction of a reader per
            // partition). The chain's "running" is read before its results: a chain ends after adding its last one.
            FetchChain c = s.chain;
            if (s.position != null && (c == null || (!c.running && c.ready.isEmpty()))
                    && s.bufferedCount < aheadRecords() && now >= s.retryAtNanos) {
                FetchChain next = new FetchChain(s.bufferedCount);
                s.chain = next;
                boolean batches = config.recordBatches() && !s.jsonOnly;
                long from = s.fetchedNext;
                fetchThreads.execute(() -> runChain(next, s.tp, batches, from, wait));
            }
        }
    }

    /**
     * On a fetch thread: fetches from {@code offset}, hands the answer to the poll loop, and goes on with the next
     * fetch at once while the partition has fewer than {@link #aheadRecords} records buffered and fetched, so a
     * busy partition's next request does not wait for the polling thread to be scheduled (measured: on a loaded
     * machine that hop, once per fetch, held reads to about half of a blocking reader per partition). Ends after an
     * error, an empty answer (the partition's end), a switch to JSON, or when abandoned.
     */
    private void runChain(FetchChain chain, TopicPartition tp, boolean batches, long offset, long waitMs) {
        try {
            long from = offset;
            while (!chain.abandoned) {
                Fetched f;
                try {
                    f = fetch(tp, batches, from, waitMs);
                } catch (RuntimeException e) {
                    chain.ready.add(new FetchResult(null, e));
                    return;
                }
                int n = f.records().remaining(); // before the polling thread may take them
                chain.ready.add(new FetchResult(f, null));
                longestChain.accumulateAndGet(++chain.fetches, Math::max); // once its records count as fetched
                int ahead = chain.unconsumed.addAndGet(n);
                wake.offer(Boolean.TRUE);
                if (n == 0 || f.switchToJson() || ahead >= aheadRecords()) {
                    return;
                }
                from = f.nextOffset();
            }
        } finally {
            chain.running = false;
            wake.offer(Boolean.TRUE);
        }
    }

    /** One fetch on the calling thread (a blocking exchange: {@link BlockingExchange}), decoded. */
    private Fetched fetch(TopicPartition tp, boolean batches, long offset, long waitMs) {
        String path = "/v1/topics/" + Admin.path(tp.topic()) + "/partitions/" + tp.partition() + "/records?offset="
                + offset + "&maxBytes=" + config.fetchMaxBytes() + "&maxRecords=" + fetchMaxRecords() + "&waitMs=" + waitMs
                + (batches ? "" : "&encoding=base64")
                + (config.isolation() == ConsumerConfig.Isolation.READ_COMMITTED ? "&isolation=read_committed" : "");
        BlockingExchange.Answer r;
        try {
            r = http.exchange("GET", path, batches ? HttpTransport.BATCHES_TYPE : HttpTransport.JSON_TYPE, null, null,
                    http.requestTimeout().plusMillis(waitMs));
        } catch (java.io.IOException e) {
            throw new UnavailableException("fetch " + tp + ": " + HttpTransport.describe(e), e);
        }
        if (r.status() != 200) {
            throw HttpTransport.problem(r);
        }
        if (!batches) {
            return fromJson(tp, r.body());
        }
        long next = r.nextOffset() == null ? offset : Long.parseLong(r.nextOffset().trim());
        try {
            // Decoded here, on the fetch thread: the polling thread only hands records out (measured: with the records
            // made by poll, the one polling thread was busy throughout a read and the Consumer read at 0.34x of the
            // benchmark reader, whose 8 threads decode; on a loaded machine each thread gets a share of the cores).
            return new Fetched(PendingRecords.of(RecordBatchCodec.decode(tp.topic(), tp.partition(), r.body(), offset)),
                    next, false);
        } catch (RecordBatchCodec.UnsupportedCodecException e) {
            return new Fetched(PendingRecords.of(List.of()), offset, true);
        }
    }

    private static Fetched fromJson(TopicPartition tp, byte[] body) {
        try {
            JsonNode a = HttpTransport.JSON.readTree(body);
            Base64.Decoder b64 = Base64.getDecoder();
            List<ConsumerRecord> records = new ArrayList<>();
            for (JsonNode rec : a.path("records")) {
                Map<String, byte[]> headers = new LinkedHashMap<>();
                rec.path("headers").fields().forEachRemaining(h ->
                        headers.put(h.getKey(), h.getValue().isNull() ? null : b64.decode(h.getValue().asText())));
                JsonNode k = rec.path("key");
                JsonNode v = rec.path("value");
                records.add(new ConsumerRecord(tp.topic(), tp.partition(), rec.path("offset").asLong(),
                        rec.path("timestamp").asLong(), k.isNull() || k.isMissingNode() ? null : b64.decode(k.asText()),
                        v.isNull() || v.isMissingNode() ? null : b64.decode(v.asText()), headers));
            }
            return new Fetched(PendingRecords.of(records), a.path("nextOffset").asLong(), false);
        } catch (java.io.IOException e) {
            throw new TierlogException("unreadable fetch answer for " + tp + ": " + e.getMessage(), e);
        }
    }

    /** Takes in the fetches that finished; those of an abandoned chain (a seek or revocation since) are never seen. */
    private void collect() {
        for (PartitionState s : active.values()) {
            FetchChain c = s.chain;
            if (c == null) {
                continue;
            }
            FetchResult r;
            while ((r = c.ready.poll()) != null) {
                if (r.error() == null) {
                    Fetched fetched = r.fetched();
                    if (fetched.switchToJson()) {
                        s.jsonOnly = true;
                    } else {
                        if (fetched.records().remaining() > 0) {
                            s.bufferedCount += fetched.records().remaining();
                            s.buffered.addLast(fetched.records());
                        }
                        s.fetchedNext = Math.max(fetched.nextOffset(), s.fetchedNext);
                    }
                    s.failures = 0;
                    continue;
                }
                RuntimeException cause = r.error();
                if (cause instanceof ProblemException p && p.type().equals("offset-out-of-range")) {
                    if (config.autoOffsetReset() == ConsumerConfig.OffsetReset.NONE) {
                        throw p;
                    }
                    s.reset(resetOffset(s.tp));
                    s.failures = 0;
                    break; // the chain is abandoned
                } else if (cause instanceof ProblemException p && !p.retriable()) {
                    throw p;
                } else {
                    long retryAfter = cause instanceof ProblemException p ? p.retryAfterSeconds().orElse(-1) : -1;
                    s.retryAtNanos = System.nanoTime()
                            + TimeUnit.MILLISECONDS.toNanos(http.backoff().delayMillis(s.failures++, retryAfter));
                }
            }
        }
    }

    /**
     * Up to maxPollRecords buffered records, partition by partition, starting one partition further each time (with
     * fetches running ahead, the first partition would otherwise always have records and starve the others);
     * advances positions past what it returns.
     */
    private List<ConsumerRecord> drain() {
        int buffered = 0;
        for (PartitionState s : active.values()) {
            buffered += s.bufferedCount;
        }
        List<ConsumerRecord> out = new ArrayList<>(Math.min(buffered, config.maxPollRecords())); // no regrowth
        List<PartitionState> states = new ArrayList<>(active.values());
        int n = states.size();
        drainStart = n == 0 ? 0 : (drainStart + 1) % n;
        for (int i = 0; i < n; i++) {
            PartitionState s = states.get((drainStart + i) % n);
            int taken = 0;
            while (!s.buffered.isEmpty() && out.size() < config.maxPollRecords()) {
                ConsumerRecord r = s.buffered.peekFirst().next();
                if (r == null) {
                    s.buffered.pollFirst();
                    continue;
                }
                out.add(r);
                s.position = r.offset() + 1;
                taken++;
            }
            s.bufferedCount -= taken;
            if (taken > 0 && s.chain != null) {
                s.chain.unconsumed.addAndGet(-taken);
            }
            if (s.bufferedCount == 0 && s.position != null && s.fetchedNext > s.position) {
                s.position = s.fetchedNext;
            }
        }
        return out;
    }

    private Map<TopicPartition, Long> positions() {
        Map<TopicPartition, Long> out = new TreeMap<>();
        active.forEach((tp, s) -> {
            if (s.position != null) {
                out.put(tp, s.position);
            }
        });
        return out;
    }

    private PartitionState state(TopicPartition tp) {
        PartitionState s = active.get(Objects.requireNonNull(tp, "tp"));
        if (s == null) {
            throw new IllegalStateException(tp + " is not consumed by this consumer");
        }
        return s;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("consumer is closed");
        }
    }

    private record Fetched(PendingRecords records, long nextOffset, boolean switchToJson) {
    }

    /** A fetch's records, or why it failed. */
    private record FetchResult(Fetched fetched, RuntimeException error) {
    }

    /**
     * The fetches of one partition that follow each other on a fetch thread ({@link #runChain}); a new chain starts
     * once the previous one ended and its answers were taken in. Thread-safe: the chain's thread adds, the polling
     * thread takes and counts down.
     */
    private static final class FetchChain {
        final ConcurrentLinkedQueue<FetchResult> ready = new ConcurrentLinkedQueue<>();
        /** Records of the partition buffered or fetched and not yet returned by poll, as this chain counts them. */
        final AtomicInteger unconsumed;
        volatile boolean running = true;
        /** Fetches this chain made; its own thread's count. */
        int fetches;
        /** Set by a seek, a revocation or close: its answers are for an old position, it stops after the current one. */
        volatile boolean abandoned;

        FetchChain(int buffered) {
            this.unconsumed = new AtomicInteger(buffered);
        }
    }

    private static final class PartitionState {
        final TopicPartition tp;
        /** Fetch answers taken in, their records not all returned yet. */
        final ArrayDeque<PendingRecords> buffered = new ArrayDeque<>();
        /** Records in {@code buffered} not yet returned. */
        int bufferedCount;
        Long position;
        /** Where the next fetch starts: after the last record buffered (or in flight's answer taken in). */
        long fetchedNext;
        /** The partition's current fetches; null before the first and after a seek. */
        FetchChain chain;
        boolean jsonOnly;
        long retryAtNanos;
        int failures;

        PartitionState(TopicPartition tp) {
            this.tp = tp;
        }

        void abandon() {
            if (chain != null) {
                chain.abandoned = true;
                chain = null;
            }
        }

        /** A new position: what was fetched or is in flight for the old one is dropped. */
        void reset(long offset) {
            position = offset;
            fetchedNext = offset;
            buffered.clear();
            bufferedCount = 0;
            abandon(); // a fetch for the old position may still be long-polling: it is left to finish unread
        }
    }
}
