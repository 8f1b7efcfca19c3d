package io.tierlog.client;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.tierlog.client.PartitionQueue.Batch;

/**
 * Sends records to Tierlog in batches, one partition per request, as Kafka RecordBatch v2 bodies
 * ({@code application/vnd.tierlog.record-batches}, the service's fastest produce path).
 *
 * <h2>Batching</h2>
 * Records are grouped per partition; a partition's open batch is sent when it holds {@code batchBytes}, when it is
 * {@code linger} old and the partition has no request in flight, or on {@link #flush()}/{@link #close()}. The
 * producer has up to {@code maxInFlight} requests in flight, all partitions together (Kafka's
 * {@code max.in.flight.requests.per.connection}, default 5), and each partition up to
 * {@code maxInFlightPerPartition} (default 1: HTTP/1.1 requests on separate connections may overtake each other, and
 * a batch that reaches the service before its predecessor is refused and sent again; docs/adr/0020). Keyed records go
 * where Kafka's partitioner puts them; unkeyed ones stick to one partition until its batch is closed, then move to
 * one with nothing queued or in flight (at random among those), so the requests in flight spread over partitions.
 *
 * <h2>Idempotence (the default)</h2>
 * Each batch carries the producer id, the partition's producer epoch and the sequence of its first record in
 * Kafka's numbering (records sent to that partition before it). A retry resends the same bytes, so the service
 * appends it at most once and answers a repeat with the original offsets; the service appends a batch only after
 * the one before it, and a batch refused as out of order is resent after its predecessor, so records stay in
 * {@code send} order per partition with several requests in flight ({@link PartitionQueue} has the rules). When a
 * batch fails for good, the batches after it are renumbered from sequence 0 in a new epoch once those whose outcome
 * is unknown are settled. Guarantee: every record whose future completed is in the log exactly once, in send order
 * per partition; a record whose future failed after an unknown outcome may be in the log once. Without idempotence,
 * a retry may append a batch twice or behind later ones (set {@code maxInFlight} 1 to keep order).
 *
 * <h2>Retries</h2>
 * No answer, 429 and 5xx are retried with {@link Backoff} (jittered exponential, at least {@code Retry-After}) until
 * {@code deliveryTimeout}; other errors fail the batch's futures at once with the {@link ProblemException}.
 *
 * <p>Thread-safe: any number of threads may {@code send}. One sender thread, and one thread per request in flight
 * that sends it on a blocking connection ({@link BlockingExchange}) and handles its answer.
 */
public final class Producer implements AutoCloseable {
    private final HttpTransport transport;
    private final ProducerConfig config;
    /** The idempotent producer id of this instance (the config's, or a random one). */
    private final long producerId;
    private final Admin admin;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final Condition space = lock.newCondition();
    /**
     * Guarded by lock: per topic, its partitions' queues by partition number (null: none yet). An array lookup per
     * record instead of a map keyed by a new {@link TopicPartition}.
     */
    private final Map<String, PartitionQueue[]> queues = new HashMap<>();
    /** Guarded by lock: every queue in creation order, for the sender's rotating walk. */
    private final List<PartitionQueue> order = new ArrayList<>();
    /** Guarded by lock: per topic, the partition unkeyed records stick to. */
    private final Map<String, Integer> sticky = new ConcurrentHashMap<>();
    private final Map<String, Integer> partitionCounts = new ConcurrentHashMap<>();
    private final Thread sender;
    /** Runs each request (a blocking exchange) and its answer; as many threads as requests in flight, reused. */
    private final ExecutorService requestThreads;
    private long bufferedBytes; // guarded by lock
    private int rotation; // guarded by lock: where the sender's walk over partitions starts
    private int flushes; // guarded by lock
    private boolean closed; // guarded by lock
    private boolean abort; // guarded by lock
    /** The largest array a batch starts with: a full batch's bytes (a larger record makes its own). */
    private final int maxBatchCapacity;
    /** Guarded by lock: arrays of {@link #maxBatchCapacity} bytes of finished batches, for new ones ({@link #recycle}). */
    private final ArrayDeque<byte[]> freeBodies = new ArrayDeque<>();
    /** At most a quarter of the buffer's bytes, at most 16 arrays, kept free. */
    private final int maxFreeBodies;
    private final LongAdder requests = new LongAdder();
    private final LongAdder outOfOrder = new LongAdder();
    private final LongAdder retries = new LongAdder();
    private final LongAdder batchesAcknowledged = new LongAdder();
    private final LongAdder recordsAcknowledged = new LongAdder();

    Producer(HttpTransport transport, ProducerConfig config) {
        String missing = Codecs.missingLibrary(config.compression());
        if (missing != null) {
            throw new IllegalArgumentException("compression " + config.compression() + " needs " + missing
                    + " on the class path (an optional dependency of tierlog-client; see docs/client.md)");
        }
        this.transport = transport;
        this.config = config;
        this.maxBatchCapacity = config.batchBytes() + RecordBatchCodec.HEADER_BYTES;
        this.maxFreeBodies = (int) Math.min(16, config.bufferBytes() / 4 / maxBatchCapacity);
        this.producerId = config.producerId() >= 0 ? config.producerId()
                : ThreadLocalRandom.current().nextLong(Long.MAX_VALUE);
        this.admin = new Admin(transport);
        this.requestThreads = Executors.newCachedThreadPool(r -> daemon(r, "tierlog-producer-request"));
        this.sender = daemon(this::runSender, "tierlog-producer-sender");
        sender.start();
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * Queues a record. The future completes with its offset once the service acknowledged it (durable under the
     * service's fsync policy), or exceptionally with the {@link TierlogException} that ended its delivery.
     *
     * @throws BufferFullException when the buffer is full and the policy is {@code FAIL}, or blocking timed out
     * @throws IllegalStateException after {@link #close()}
     */
    public CompletableFuture<RecordMetadata> send(ProducerRecord record) {
        int size = record.sizeInBytes();
        Integer partition = record.partition();
        if (partition == null && record.key() != null) {
            int count;
            try {
                count = partitionCount(record.topic());
            } catch (TierlogException e) {
                return CompletableFuture.failedFuture(e);
            }
            partition = KafkaPartitioner.partitionForKey(record.key(), count);
        }
        long timestamp = record.timestamp() == null ? System.currentTimeMillis() : record.timestamp();
        CompletableFuture<RecordMetadata> future = new CompletableFuture<>();
        int count = -1;
        if (partition == null) {
            try {
                count = partitionCount(record.topic()); // outside the lock: may call the service
            } catch (TierlogException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        lock.lock();
        try {
            reserve(size);
            int p;
            if (partition != null) {
                p = partition;
            } else {
                Integer s = sticky.get(record.topic());
                if (s == null || s >= count) {
                    s = ThreadLocalRandom.current().nextInt(count);
                    sticky.put(record.topic(), s);
                }
                p = s;
            }
            PartitionQueue q = queue(record.topic(), p);
            // The sender is woken only when it has something new to do (a batch to send, a linger to time), not
            // for every record: at tens of thousands of records a second that would be as many context switches.
            boolean wake = false;
            if (q.open != null && q.open.bytes + size > config.batchBytes()) {
                closeOpen(q);
                wake = true;
            }
            if (q.open == null) {
                long now = System.nanoTime();
                // Sized like the partition's last batch: a steady producer allocates each body once, at its size.
                int capacity = Math.min(maxBatchCapacity, Math.max(q.lastBatchBytes + (q.lastBatchBytes >> 3), 4096));
                // A free full-size array costs nothing to take, whatever the hint; the list is bounded.
                byte[] array = freeBodies.pollFirst();
                if (array == null) {
                    array = new byte[Math.max(capacity, RecordBatchCodec.HEADER_BYTES + size + 32)];
                }
                q.open = new Batch(q, now, now + config.deliveryTimeout().toNanos(), array, maxBatchCapacity,
                        q.lastBatchRecords + 1);
                wake = true;
            }
            // Written into the batch now, under the lock, as Kafka's accumulator appends to its open batch: no copy of
            // the record is kept, and the application may reuse its arrays once send returned.
            if (!q.open.builder.fits(size + 32) && !freeBodies.isEmpty()
                    && q.open.builder.moveTo(freeBodies.peekFirst())) {
                freeBodies.pollFirst(); // grown into a free array rather than a new one
            }
            q.open.add(timestamp, record, future, size);
            if (q.open.bytes >= config.batchBytes()) {
                closeOpen(q);
                wake = true;
            }
            if (wake) {
                work.signal();
            }
        } finally {
            lock.unlock();
        }
        return future;
    }

    /** Under lock: the queue of {@code topic}'s partition {@code p}, made on first use. */
    private PartitionQueue queue(String topic, int p) {
        PartitionQueue[] qs = queues.get(topic);
        if (qs == null || p >= qs.length) {
            qs = qs == null ? new PartitionQueue[p + 1] : Arrays.copyOf(qs, p + 1);
            queues.put(topic, qs);
        }
        PartitionQueue q = qs[p];
        if (q == null) {
            q = new PartitionQueue(new TopicPartition(topic, p));
            qs[p] = q;
            order.add(q);
        }
        return q;
    }

    /** Under lock: the queue of {@code topic}'s partition {@code p}, or null if it has none yet. */
    private PartitionQueue existingQueue(String topic, int p) {
        PartitionQueue[] qs = queues.get(topic);
        return qs == null || p >= qs.length ? null : qs[p];
    }

    /** The producer's counters so far (each read on its own, not one atomic snapshot). */
    public ProducerStats stats() {
        return new ProducerStats(requests.sum(), outOfOrder.sum(), retries.sum(), batchesAcknowledged.sum(),
                recordsAcknowledged.sum());
    }

    /** Blocks until every record sent before this call is acknowledged or has failed. */
    public void flush() {
        // One completion per batch, not per record: a flush behind a full buffer waits for tens of batches, not for
        // tens of thousands of records' futures (measured: CompletableFuture.allOf over every record's future was a
        // tree of as many nodes, built on the caller's thread and walked on the answering threads).
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        lock.lock();
        try {
            flushes++;
            for (PartitionQueue q : order) {
                if (q.open != null) {
                    pending.add(q.open.done);
                }
                q.queued.forEach(b -> pending.add(b.done));
                q.window.forEach(b -> pending.add(b.done));
            }
            work.signal();
        } finally {
            lock.unlock();
        }
        try {
            CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
        } finally {
            lock.lock();
            try {
                flushes--;
            } finally {
                lock.unlock();
            }
        }
    }

    /** {@link #close(Duration)} with the delivery timeout: sends everything buffered, then stops. */
    @Override
    public void close() {
        close(config.deliveryTimeout());
    }

    /**
     * Stops accepting records, sends what is buffered and waits up to {@code timeout} for it; records still
     * unacknowledged then fail with a {@link TierlogException}. Idempotent.
     */
    public void close(Duration timeout) {
        lock.lock();
        try {
            closed = true;
            work.signalAll();
            space.signalAll();
        } finally {
            lock.unlock();
        }
        try {
            sender.join(Math.max(1, timeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<Batch> left = new ArrayList<>();
        lock.lock();
        try {
            abort = true;
            for (PartitionQueue q : order) {
                if (q.open != null) {
                    left.add(q.open);
                    q.open = null;
                }
                left.addAll(q.queued);
                left.addAll(q.window);
                q.queued.clear();
            }
            work.signalAll();
        } finally {
            lock.unlock();
        }
        TierlogException gone = new TierlogException("producer closed before the record was acknowledged");
        left.forEach(b -> {
            List<CompletableFuture<RecordMetadata>> futures;
            lock.lock();
            try {
                futures = b.futures;
                release(b); // an answer still on its way finds the batch finished
            } finally {
                lock.unlock();
            }
            completeExceptionally(b, futures, gone);
        });
        requestThreads.shutdown(); // a request still on its way finishes and finds its batch ended
    }

    // ---- the buffer

    /** Under lock: waits for (or refuses) {@code size} more buffered bytes. A lone record always fits. */
    private void reserve(int size) {
        if (closed) {
            throw new IllegalStateException("producer is closed");
        }
        long deadline = System.nanoTime() + config.maxBlock().toNanos();
        while (bufferedBytes > 0 && bufferedBytes + size > config.bufferBytes()) {
            if (config.whenFull() == ProducerConfig.WhenFull.FAIL) {
                throw new BufferFullException("producer buffer full: " + bufferedBytes + " of "
                        + config.bufferBytes() + " bytes wait for acknowledgement");
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new BufferFullException("no producer buffer space within maxBlock " + config.maxBlock());
            }
            try {
                space.awaitNanos(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TierlogException("interrupted while waiting for buffer space", e);
            }
            if (closed) {
                throw new IllegalStateException("producer is closed");
            }
        }
        bufferedBytes += size;
    }

    // ---- metadata

    private int partitionCount(String topic) {
        Integer n = partitionCounts.get(topic);
        if (n == null) {
            n = admin.describeTopic(topic).partitions();
            partitionCounts.put(topic, n);
        }
        return n;
    }

    /** Under lock, after partitionCount: the cached count. */
    private int partitions(String topic, int fallback) {
        Integer n = partitionCounts.get(topic);
        return n == null ? fallback : n;
    }

    // ---- the sender

    /**
     * Under lock: the open batch joins the partition's queue; unkeyed records move to another partition, one with
     * nothing queued or in flight if there is one (as Kafka's adaptive partitioning favours less loaded partitions),
     * so that batches do not wait behind each other while other partitions could take them.
     */
    private void closeOpen(PartitionQueue q) {
        q.lastBatchBytes = q.open.builder.sizeInBytes();
        q.lastBatchRecords = q.open.recordCount;
        q.queued.addLast(q.open);
        q.open = null;
        String topic = q.tp.topic();
        Integer s = sticky.get(topic);
        int count = partitions(topic, 1);
        if (s == null || s != q.tp.partition() || count <= 1) {
            return;
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int from = random.nextInt(count);
        for (int i = 0; i < count; i++) {
            int p = (from + i) % count;
            PartitionQueue other = p == s ? q : existingQueue(topic, p);
            if (p != s && (other == null || other.idle())) {
                sticky.put(topic, p);
                return;
            }
        }
        int next = random.nextInt(count - 1);
        sticky.put(topic, next >= s ? next + 1 : next);
    }

    private void runSender() {
        List<Batch> toSend = new ArrayList<>();
        lock.lock();
        try {
            while (!abort) {
                long wait = collect(System.nanoTime(), toSend);
                if (closed && order.stream().allMatch(PartitionQueue::idle)) {
                    return;
                }
                if (!toSend.isEmpty()) {
                    lock.unlock();
                    try {
                        toSend.forEach(this::dispatch);
                    } finally {
                        lock.lock();
                    }
                    toSend.clear();
                    continue;
                }
                work.awaitNanos(Math.max(wait, 100_000));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under lock: closes the partial batches that are due and adds to {@code toSend} what may be sent now, within the
     * producer-wide and per-partition limits.
     *
     * @return nanoseconds until a linger or a retry is due (at most a second)
     */
    private long collect(long now, List<Batch> toSend) {
        int perPartition = config.maxInFlightPerPartition();
        long wait = TimeUnit.SECONDS.toNanos(1);
        int inFlight = 0;
        for (PartitionQueue q : order) {
            inFlight += q.inFlight();
        }
        // The walk starts one partition further each time, so that under the producer-wide limit no partition
        // always comes first.
        int n = order.size();
        rotation = n == 0 ? 0 : (rotation + 1) % n;
        for (int i = 0; i < n; i++) {
            PartitionQueue q = order.get((rotation + i) % n);
            int room = config.maxInFlight() - inFlight - toSend.size();
            // A full batch was closed by send and is pipelined. A partial one past its linger goes only when the
            // partition has no request in flight and the producer has a free slot (Nagle's rule): until then it
            // keeps filling, so requests stay large at high rates (measured: closing partial batches at linger into
            // free window slots made requests 5-10 times smaller and the producer slower than with one request in
            // flight).
            if (q.open != null && q.queued.isEmpty() && q.hasRoom(perPartition)) {
                long age = now - q.open.createdNanos;
                boolean quiet = q.window.isEmpty() && room > 0;
                if (closed || flushes > 0 || (quiet && age >= config.linger().toNanos())) {
                    closeOpen(q);
                } else if (quiet) {
                    wait = Math.min(wait, config.linger().toNanos() - age);
                }
            }
            wait = Math.min(wait, q.sendable(now, perPartition, room, toSend));
        }
        return wait;
    }

    /**
     * Sends what an answer made sendable from the answering thread: one thread hand-off less per request than
     * waking the sender (measured to matter on a machine short of CPU). The sender still handles lingers and retries.
     */
    private void pump() {
        List<Batch> toSend = new ArrayList<>(2);
        lock.lock();
        try {
            if (abort) {
                return;
            }
            collect(System.nanoTime(), toSend);
        } finally {
            lock.unlock();
        }
        toSend.forEach(this::dispatch);
    }

    /** Sends (or resends) {@code b}, which {@link PartitionQueue#sendable} numbered and marked in flight. */
    private void dispatch(Batch b) {
        PartitionQueue q = b.queue;
        RecordBatchBuilder builder = b.builder;
        if (builder == null) {
            return; // dropped by close() meanwhile
        }
        int epoch = b.epoch;
        int sequence = b.sequence;
        String path = "/v1/topics/" + q.tp.topic() + "/records?partition=" + q.tp.partition();
        requests.increment();
        try {
            requestThreads.execute(() -> {
                BlockingExchange.Answer answer;
                try {
                    // Encoded on the request thread, not the sender's: up to maxInFlight batches are encoded at once
                    // (measured: with every batch encoded by the one sender thread, the producer reached 0.66x of the
                    // benchmark producer, which builds its batches on its 5 request threads). Encoded (and compressed)
                    // once; a renumbering after an epoch bump only stamps it again. A batch is resent or renumbered
                    // only after its previous request was answered, so no two threads touch its bytes at once.
                    if (b.encoded == null) {
                        RecordBatchBuilder.Finished finished = builder.finish(config.compression());
                        b.encoded = finished.bytes();
                        b.encodedLength = finished.length();
                    }
                    byte[] body = b.encoded;
                    int length = b.encodedLength;
                    // The CRC is written here only, once per attempt's numbering (the records were written at send).
                    RecordBatchCodec.stamp(body, length, config.idempotent() ? producerId : -1, (short) epoch, sequence);
                    answer = transport.exchange("POST", path, HttpTransport.JSON_TYPE, HttpTransport.BATCHES_TYPE, body,
                            length, config.requestTimeout());
                } catch (IOException | RuntimeException e) {
                    answered(b, null, e);
                    return;
                }
                answered(b, answer, null);
            });
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            answered(b, null, closing); // close() ended the producer meanwhile: the batch is failed there
        }
    }

    private void answered(Batch b, BlockingExchange.Answer response, Throwable error) {
        PartitionQueue q = b.queue;
        if (error == null && response.status() == 200) {
            long base;
            boolean duplicate;
            try {
                ProduceAnswer answer = ProduceAnswer.parse(response.body());
                base = answer.baseOffset();
                duplicate = answer.duplicate();
            } catch (IOException | RuntimeException bad) {
                b.outcomeUnknown = true;
                fail(b, new TierlogException("unreadable produce answer: " + bad.getMessage(), bad));
                return;
            }
            List<CompletableFuture<RecordMetadata>> futures;
            lock.lock();
            try {
                futures = b.futures;
                q.acknowledged(b, System.nanoTime());
                release(b);
                recycle(b);
            } finally {
                lock.unlock();
            }
            pump(); // the next batch goes out before this one's futures run the application's callbacks
            if (futures != null) {
                batchesAcknowledged.increment();
                recordsAcknowledged.add(futures.size());
                String topic = q.tp.topic();
                int partition = q.tp.partition();
                for (int i = 0; i < futures.size(); i++) {
                    futures.get(i).complete(new RecordMetadata(topic, partition, base + i, duplicate));
                }
                b.done.complete(null);
            }
            return;
        }
        TierlogException failure;
        long retryAfter = -1;
        boolean retriable;
        if (error != null) {
            failure = new UnavailableException("produce to " + q.tp + ": " + HttpTransport.describe(error), error);
            retriable = true;
            b.outcomeUnknown = true;
        } else {
            ProblemException p = HttpTransport.problem(response);
            if (config.idempotent() && p.status() == 409 && p.type().endsWith("out-of-order-sequence")) {
                lock.lock();
                try {
                    // Nothing was appended (a batch the service holds is answered as a duplicate instead).
                    if (q.outOfOrder(b, System.nanoTime())) {
                        outOfOrder.increment();
                        work.signal();
                        return;
                    }
                } finally {
                    lock.unlock();
                }
                fail(b, p); // the service expects a sequence no batch of ours explains: a new epoch follows
                return;
            }
            failure = p;
            retriable = p.retriable();
            retryAfter = p.retryAfterSeconds().orElse(-1);
            // A 5xx other than the refusals (429, 503) may come after the append: its outcome is unknown.
            b.outcomeUnknown |= p.status() >= 500 && p.status() != 503;
        }
        long delay = config.backoff().delayMillis(b.attempts - 1, retryAfter);
        long now = System.nanoTime();
        if (retriable && now + TimeUnit.MILLISECONDS.toNanos(delay) < b.deadlineNanos) {
            lock.lock();
            try {
                if (!abort) {
                    q.retryLater(b, now + TimeUnit.MILLISECONDS.toNanos(delay));
                    retries.increment();
                    work.signal();
                    return;
                }
            } finally {
                lock.unlock();
            }
        }
        fail(b, failure);
    }

    /** Ends {@code b} with {@code failure}; its partition renumbers what follows it (see {@link PartitionQueue}). */
    private void fail(Batch b, TierlogException failure) {
        List<CompletableFuture<RecordMetadata>> futures;
        lock.lock();
        try {
            futures = b.futures;
            b.queue.failed(b, config.idempotent());
            release(b);
            recycle(b);
        } finally {
            lock.unlock();
        }
        completeExceptionally(b, futures, failure);
    }

    /** Fails every record of {@code b} (if {@code futures}, taken under the lock, is not null), then its batch. */
    private static void completeExceptionally(Batch b, List<CompletableFuture<RecordMetadata>> futures,
                                              TierlogException failure) {
        if (futures != null) {
            for (int i = 0; i < futures.size(); i++) {
                futures.get(i).completeExceptionally(failure);
            }
            b.done.complete(null);
        }
    }

    /**
     * Under lock, on the thread that had {@code b}'s answer (so no request still reads its body): a full-size body
     * array goes to the free list for a later batch, as Kafka's BufferPool keeps its batch-size buffers. Measured:
     * with a new array per batch, the arrays of the batches waiting in a full buffer were copied by every young
     * collection and each new one was zeroed, which cost the producer more than writing the records at send saved.
     */
    private void recycle(Batch b) {
        byte[] body = b.encoded;
        b.encoded = null;
        if (body != null && body.length == maxBatchCapacity && config.compression() == Compression.NONE
                && freeBodies.size() < maxFreeBodies) {
            freeBodies.addLast(body);
        }
    }

    /** Under lock: the batch's bytes leave the buffer; the sender may have work. */
    private void release(Batch b) {
        if (b.builder != null) {
            bufferedBytes -= b.bytes;
            b.builder = null;
            b.futures = null;
            space.signalAll();
        }
        work.signal();
    }
}
