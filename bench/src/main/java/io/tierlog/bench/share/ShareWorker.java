package io.tierlog.bench.share;

import io.tierlog.bench.http.BlockingHttp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * One HTTP worker of a Tierlog share group in the bench: {@link #lease} on the calling thread, {@link #accept} on a
 * second connection from the worker's own acking thread, so the acks of lease N travel while lease N+1 is asked for.
 * That is what a {@code KafkaShareConsumer} does in its implicit mode, where the acknowledgements of a poll's records
 * ride on the next ShareFetch request instead of a round trip of their own. One worker is used by one thread; its
 * acking thread runs one acks request at a time, in order.
 */
final class ShareWorker implements AutoCloseable {
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

    private final URI leaseUri;
    private final URI acksUri;
    private final byte[] leaseBody;
    private final ExecutorService acker;

    /** A worker leasing up to {@code maxRecords} records for {@code leaseMs}, long-polling up to {@code waitMs}. */
    ShareWorker(URI base, String group, String topic, int maxRecords, long leaseMs, long waitMs) {
        String path = "/v1/share-groups/" + group + "/topics/" + topic;
        this.leaseUri = base.resolve(path + "/lease");
        this.acksUri = base.resolve(path + "/acks");
        this.leaseBody = ("{\"maxRecords\":" + maxRecords + ",\"leaseMs\":" + leaseMs + ",\"waitMs\":" + waitMs + "}")
                .getBytes(StandardCharsets.US_ASCII);
        this.acker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, Thread.currentThread().getName() + "-acks");
            t.setDaemon(true);
            return t;
        });
    }

    /** One lease request, answered; an answer other than 200 is an {@link IllegalStateException}. */
    LeasedBatch lease() throws IOException {
        return LeasedBatch.read(post(leaseUri, leaseBody, "lease"));
    }

    /**
     * Accepts every record of {@code batch} in one acks request sent from the acking thread; completes with the number
     * accepted once the answer says every one took effect, exceptionally otherwise.
     */
    CompletableFuture<Integer> accept(LeasedBatch batch) {
        byte[] body = batch.acceptAll();
        return CompletableFuture.supplyAsync(() -> {
            try {
                return batch.requireAllAccepted(post(acksUri, body, "acks"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, acker);
    }

    private static byte[] post(URI uri, byte[] body, String what) throws IOException {
        BlockingHttp.Posted r = BlockingHttp.post(uri, "application/json", body, 0, body.length,
                BlockingHttp.CONNECT_TIMEOUT, READ_TIMEOUT);
        if (r.status() != 200) {
            throw new IllegalStateException(what + " answered " + r.status() + ": " + r.bodyText());
        }
        return r.body();
    }

    @Override
    public void close() {
        acker.shutdownNow();
    }
}
