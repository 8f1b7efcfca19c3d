package io.tierlog.bench.client;

import io.tierlog.bench.batches.RecordBatchDecoder;
import io.tierlog.bench.compare.Payload;
import io.tierlog.bench.compare.RecordBatchBody;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark HTTP producer's requests (the same kafka-clients record batches, one partition per request, never
 * two in flight to one partition, {@code maxInFlight} at once) sent with the JDK {@link HttpClient}'s
 * {@code sendAsync} instead of blocking {@code HttpURLConnection}s: isolates what the client library's HTTP stack
 * before ADR 0031 cost from what the library itself does (batching, sequences, futures). Not thread-safe; one run
 * at a time.
 */
final class JdkHttpProducer {
    private record Answer(int partition, HttpResponse<byte[]> response, Throwable failure) {
    }

    private JdkHttpProducer() {
    }

    /** Sends {@code records} records and returns records per second once every request is answered 200. */
    static double run(HttpClient http, URI base, String topic, int partitions, Payload payload, int records,
                      int batchRecords, int maxInFlight, boolean wholeBody) throws InterruptedException {
        URI[] targets = new URI[partitions];
        for (int p = 0; p < partitions; p++) {
            targets[p] = URI.create(base + "/v1/topics/" + topic + "/records?partition=" + p);
        }
        LinkedBlockingQueue<Answer> answers = new LinkedBlockingQueue<>();
        boolean[] busy = new boolean[partitions];
        int cursor = 0;
        int inFlight = 0;
        long sent = 0;
        long start = System.nanoTime();
        while (sent < records || inFlight > 0) {
            if (sent < records && inFlight < Math.min(maxInFlight, partitions)) {
                int partition = -1;
                for (int i = 0; i < partitions; i++) {
                    int p = (cursor + i) % partitions;
                    if (!busy[p]) {
                        partition = p;
                        break;
                    }
                }
                busy[partition] = true;
                cursor = (partition + 1) % partitions;
                int count = (int) Math.min(batchRecords, records - sent);
                ByteBuffer batch = RecordBatchBody.build(payload, sent, count, System.currentTimeMillis());
                sent += count;
                HttpRequest request = HttpRequest.newBuilder(targets[partition]).timeout(Duration.ofSeconds(60))
                        .header("Content-Type", RecordBatchDecoder.MEDIA_TYPE)
                        .POST(wholeBody ? wholeBody(batch) : HttpRequest.BodyPublishers.ofByteArray(batch.array(),
                                batch.arrayOffset() + batch.position(), batch.remaining())).build();
                inFlight++;
                int p = partition;
                http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
                        .whenComplete((r, e) -> answers.add(new Answer(p, r, e)));
                continue;
            }
            Answer a = answers.poll(70, TimeUnit.SECONDS);
            if (a == null) {
                throw new IllegalStateException("JDK HttpClient producer: no answer in 70 s");
            }
            inFlight--;
            busy[a.partition()] = false;
            if (a.failure() != null || a.response().statusCode() != 200) {
                throw new IllegalStateException("JDK HttpClient produce to " + a.partition() + " failed: "
                        + (a.failure() != null ? a.failure() : a.response().statusCode()));
            }
        }
        return records / ((System.nanoTime() - start) / 1e9);
    }

    /** The body as one buffer, as the client library's Producer sent it before ADR 0031. */
    private static HttpRequest.BodyPublisher wholeBody(ByteBuffer batch) {
        ByteBuffer body = batch.slice();
        return HttpRequest.BodyPublishers.fromPublisher(subscriber -> {
            java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
            subscriber.onSubscribe(new java.util.concurrent.Flow.Subscription() {
                @Override
                public void request(long n) {
                    if (!done.getAndSet(true)) {
                        subscriber.onNext(body.duplicate());
                        subscriber.onComplete();
                    }
                }

                @Override
                public void cancel() {
                    done.set(true);
                }
            });
        }, body.remaining());
    }
}
