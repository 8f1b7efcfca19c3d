package io.tierlog.bench.compare;

import org.HdrHistogram.Histogram;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One Tierlog producer of the comparison: sends {@code POST /v1/topics/{t}/records} requests of up to
 * {@code batchRecords} records with up to {@code maxInFlight} requests in flight at once (HTTP/1.1 has no
 * pipelining, so the {@link HttpClient} opens one connection per concurrent request and reuses them). What a
 * request looks like (JSON naming the partition on every record, or a Kafka record batch with {@code ?partition=P})
 * is the {@link Requests}' business. Each request goes to one partition, chosen by client-side sticky rotation over
 * the topic's partitions (as Kafka's sticky partitioner fills one batch per partition and moves on), skipping
 * partitions that already have a request in flight: never two requests of one producer in flight to the same
 * partition, so per-partition order holds as with Kafka's idempotent producer.
 *
 * <p>Paced, each record has its own arrival time; whenever a slot is free the producer sends what has arrived and
 * not been sent (up to {@code batchRecords}), and each record's latency runs from its arrival to its request's
 * response, so time spent waiting for a free slot counts (as {@code linger.ms} and a full in-flight window count on
 * the Kafka side). Unpaced, all records are there at once: full requests, each request's latency (from the moment
 * it is handed to the client, before its request is built, to its response) recorded once per record in it.
 *
 * <p>{@link #run} is called on one thread, which alone touches the state and the histogram; responses are handed
 * to it through a queue. A failed request fails the run; requests still in flight then complete unobserved.
 */
final class PipelinedProducer {
    /**
     * Builds the request for {@code count} records of the payload from index {@code firstRecord}, all to
     * {@code partition}, without a timeout (the producer sets it). Called on the producer's thread, inside the
     * timed region; must be safe to call from several producers' threads at once.
     */
    @FunctionalInterface
    interface Requests {
        HttpRequest.Builder request(int partition, long firstRecord, int count);
    }

    private final HttpClient http;
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
                       HttpResponse<byte[]> response, Throwable failure) {
    }

    PipelinedProducer(HttpClient http, Requests requests, ProduceSpec spec, int worker, int partitions,
                      int maxInFlight, Histogram histogram, Duration requestTimeout) {
        if (maxInFlight < 1 || maxInFlight > partitions) {
            throw new IllegalArgumentException("maxInFlight must be 1.." + partitions + ", was " + maxInFlight);
        }
        this.http = http;
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
                if (arrived > sent) {
                    int count = (int) Math.min(spec.batchRecords(), arrived - sent);
                    send(sent, count);
                    sent += count;
                    continue;
                }
                // Nothing new has arrived: wait for the next arrival or a response, whichever comes first.
                done = acks.poll(first + (long) (sent * interval) - now, TimeUnit.NANOSECONDS);
            } else if (done == null) {
                done = acks.poll(ackWaitNanos, TimeUnit.NANOSECONDS);
                if (done == null) {
                    throw new IllegalStateException("Tierlog producer " + worker + ": no response within "
                            + TimeUnit.NANOSECONDS.toSeconds(ackWaitNanos) + " s with " + inFlight + " in flight");
                }
            }
            if (done != null) {
                complete(done);
            }
        }
    }

    private void send(long firstRecord, int count) {
        int partition = nextPartition();
        // Handed over before the request is built: building it is the client's work, as Kafka's producer
        // serializes and appends each record to its batch inside send().
        long handedOver = System.nanoTime();
        HttpRequest request = requests.request(partition, firstRecord, count).timeout(requestTimeout).build();
        inFlight++;
        http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
                .whenComplete((r, e) -> acks.add(new Ack(partition, firstRecord, count, handedOver, System.nanoTime(),
                        r, e)));
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
        if (ack.response().statusCode() != 200) {
            throw new IllegalStateException("Tierlog produce to partition " + ack.partition() + " answered "
                    + ack.response().statusCode() + ": " + new String(ack.response().body(), StandardCharsets.UTF_8));
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
