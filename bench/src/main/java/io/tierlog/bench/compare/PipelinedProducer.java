package io.tierlog.bench.compare;

import io.tierlog.bench.http.BlockingHttp;
import org.HdrHistogram.Histogram;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One Tierlog producer of the comparison: sends {@code POST /v1/topics/{t}/records} requests of up to
 * {@code batchRecords} records with up to {@code maxInFlight} requests in flight at once. HTTP/1.1 has no
 * pipelining, so each request in flight needs its own connection: the producer has {@code maxInFlight} sender
 * threads, each doing one blocking {@link BlockingHttp#post} ({@code HttpURLConnection}, keep-alive, so the
 * connections are reused); there are never more requests in flight than senders, so a request waits at most for
 * a sender's hand-back to its pool. The request timeout bounds the connect and each blocking read. What a request
 * looks like (JSON naming the partition on every record, or a Kafka record batch with {@code ?partition=P}) is the
 * {@link Requests}' business. Each request goes to one partition, chosen by client-side sticky rotation over
 * the topic's partitions (as Kafka's sticky partitioner fills one batch per partition and moves on), skipping
 * partitions that already have a request in flight: never two requests of one producer in flight to the same
 * partition, so per-partition order holds as with Kafka's idempotent producer.
 *
 * <p>Paced, each record has its own arrival time, and each record's latency runs from its arrival to its request's
 * response, so time spent waiting to be sent counts (as {@code linger.ms} and a full in-flight window count on the
 * Kafka side). A slot being free, a request goes when a full one ({@code batchRecords}) has arrived; a partial one
 * goes only when none of this producer's requests is in flight (Nagle's rule, with the previous response as the
 * clock). So a lone record at a low rate goes at once, and as the rate grows requests grow with it instead of
 * multiplying: each partial request costs the service about as much as a full one (an HTTP exchange, a file lock
 * and, under {@code fsync=always}, an fsync of its partition's file), and sending every arrival at once kept all
 * windows full of small requests, whose fsyncs queued on the disk. At half of the peak rate with 8 producers this
 * took the p99 from 86 to 27-31 ms and the p50 from 26 to 8-9 ms (the same service, paced runs after warm-up).
 * Unpaced, all records are there at once: full requests, each request's latency (from the moment it is handed to
 * the client, before its request is built, to its response) recorded once per record in it.
 *
 * <p>{@link #run} is called on one thread, which alone touches the state and the histogram; responses are handed
 * to it through a queue by the sender threads. A failed request fails the run; requests still in flight then
 * complete unobserved. {@link #close} stops the sender threads once their requests are done; the producer is
 * created (its senders started) before the timed region.
 */
final class PipelinedProducer implements AutoCloseable {
    /**
     * A POST of {@code body[offset, offset + length)} with the given Content-Type and further headers (name, value,
     * ...; the {@code Authorization} of a token-mode service).
     */
    record Post(URI uri, String contentType, byte[] body, int offset, int length, String[] headers) {
        Post(URI uri, String contentType, byte[] body, String[] headers) {
            this(uri, contentType, body, 0, body.length, headers);
        }
    }

    /**
     * Builds the request for {@code count} records of the payload from index {@code firstRecord}, all to
     * {@code partition}. Called on the producer's thread, inside the timed region; must be safe to call from
     * several producers' threads at once.
     */
    @FunctionalInterface
    interface Requests {
        Post request(int partition, long firstRecord, int count);
    }

    private final ThreadPoolExecutor senders;
    private final Requests requests;
    private final ProduceSpec spec;
    private final int worker;
    private final int partitions;
    private final int maxInFlight;
    private final Histogram histogram;
    private final Duration requestTimeout;
    private final BlockingQueue<Ack> acks = new LinkedBlockingQueue<>();
    private final boolean[] busy;
    private int inFlight;
    private int cursor;
    private double interval;
    private long first;

    /** One answered (or failed) request: what it carried and when it was sent and answered. */
    private record Ack(int partition, long firstRecord, int count, long handedOver, long acked,
                       BlockingHttp.Posted response, Throwable failure) {
    }

    PipelinedProducer(Requests requests, ProduceSpec spec, int worker, int partitions,
                      int maxInFlight, Histogram histogram, Duration requestTimeout) {
        if (maxInFlight < 1 || maxInFlight > partitions) {
            throw new IllegalArgumentException("maxInFlight must be 1.." + partitions + ", was " + maxInFlight);
        }
        AtomicInteger threads = new AtomicInteger();
        this.senders = new ThreadPoolExecutor(maxInFlight, maxInFlight, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "tierlog-producer-" + worker + "-sender-" + threads.getAndIncrement());
                    t.setDaemon(true);
                    return t;
                });
        senders.prestartAllCoreThreads();
        this.requests = requests;
        this.spec = spec;
        this.worker = worker;
        this.partitions = partitions;
        this.maxInFlight = maxInFlight;
        this.histogram = histogram;
        this.requestTimeout = requestTimeout;
        this.busy = new boolean[partitions];
        // Producers start their rotations on different partitions, as Kafka's producers each pick their own.
        this.cursor = worker % partitions;
    }

    /** Sends this producer's share of the spec's records and returns once every one is acknowledged. */
    void run(long startNanos) throws Exception {
        long n = spec.recordsFor(worker);
        interval = spec.paced() ? 1e9 / (spec.recordsPerSecond() / spec.producers()) : 0;
        first = startNanos + (long) (interval * worker / spec.producers());
        long sent = 0;
        // A response must come within the request timeout; waiting longer than that for one means a lost callback.
        long ackWaitNanos = requestTimeout.toNanos() + TimeUnit.SECONDS.toNanos(10);
        while (sent < n || inFlight > 0) {
            Ack done = acks.poll();
            if (done == null && sent < n && inFlight < maxInFlight) {
                long now = System.nanoTime();
                long arrived = spec.paced() ? Math.min(n, (long) Math.floor((now - first) / interval) + 1) : n;
                long waiting = arrived - sent;
                if (waiting >= spec.batchRecords() || (waiting > 0 && (inFlight == 0 || !spec.paced()))) {
                    int count = (int) Math.min(spec.batchRecords(), waiting);
                    send(sent, count);
                    sent += count;
                    continue;
                }
                if (arrived == n) {
                    // The rest has arrived and waits for the request in flight: nothing to wake up for but it.
                    done = awaitAck(ackWaitNanos);
                } else {
                    // Wait for a response, or for the arrival that makes a request worth sending (the first one
                    // with nothing in flight, else the one that fills a request), whichever comes first.
                    long due = waiting == 0 ? sent : sent + spec.batchRecords() - 1;
                    done = acks.poll(first + (long) (due * interval) - now, TimeUnit.NANOSECONDS);
                }
            } else if (done == null) {
                done = awaitAck(ackWaitNanos);
            }
            if (done != null) {
                complete(done);
            }
        }
    }

    private Ack awaitAck(long ackWaitNanos) throws InterruptedException {
        Ack done = acks.poll(ackWaitNanos, TimeUnit.NANOSECONDS);
        if (done == null) {
            throw new IllegalStateException("Tierlog producer " + worker + ": no response within "
                    + TimeUnit.NANOSECONDS.toSeconds(ackWaitNanos) + " s with " + inFlight + " in flight");
        }
        return done;
    }

    private void send(long firstRecord, int count) {
        int partition = nextPartition();
        // Handed over before the request is built: building it is the client's work, as Kafka's producer
        // serializes and appends each record to its batch inside send().
        long handedOver = System.nanoTime();
        Post post = requests.request(partition, firstRecord, count);
        inFlight++;
        senders.execute(() -> {
            try {
                BlockingHttp.Posted r = BlockingHttp.post(post.uri(), post.contentType(), post.body(), post.offset(),
                        post.length(), BlockingHttp.CONNECT_TIMEOUT, requestTimeout, post.headers());
                acks.add(new Ack(partition, firstRecord, count, handedOver, System.nanoTime(), r, null));
            } catch (Throwable e) {
                acks.add(new Ack(partition, firstRecord, count, handedOver, System.nanoTime(), null, e));
            }
        });
    }

    /** Lets requests in flight finish (unobserved) and ends the sender threads after them. */
    @Override
    public void close() {
        senders.shutdown();
    }

    /** The next partition in rotation that has no request of this producer in flight; marks it busy. */
    private int nextPartition() {
        for (int i = 0; i < partitions; i++) {
            int p = (cursor + i) % partitions;
            if (!busy[p]) {
                busy[p] = true;
                cursor = (p + 1) % partitions;
                return p;
            }
        }
        throw new IllegalStateException("no free partition with " + inFlight + " requests in flight");
    }

    private void complete(Ack ack) {
        busy[ack.partition()] = false;
        inFlight--;
        if (ack.failure() != null) {
            throw new IllegalStateException("Tierlog produce to partition " + ack.partition() + " failed: "
                    + ack.failure(), ack.failure());
        }
        if (ack.response().status() != 200) {
            throw new IllegalStateException("Tierlog produce to partition " + ack.partition() + " answered "
                    + ack.response().status() + ": " + ack.response().bodyText());
        }
        if (spec.paced()) {
            for (int j = 0; j < ack.count(); j++) {
                long arrival = first + (long) ((ack.firstRecord() + j) * interval);
                histogram.recordValue(Math.max(0, (ack.acked() - arrival) / 1000));
            }
        } else {
            // Every record of the request was handed over together and acknowledged by this one response.
            histogram.recordValueWithCount(Math.max(0, (ack.acked() - ack.handedOver()) / 1000), ack.count());
        }
    }
}
