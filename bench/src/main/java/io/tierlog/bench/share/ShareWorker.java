package io.tierlog.bench.share;

import io.tierlog.bench.http.BlockingHttp;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
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
    private final LeaseAnswer form;
    private final ExecutorService acker;

    /**
     * A worker leasing up to {@code maxRecords} records for {@code leaseMs}, long-polling up to {@code waitMs}, asking
     * for the lease answer {@code form} (the binary ones hold stored record batches, as a ShareFetch answer does).
     */
    ShareWorker(URI base, String group, String topic, int maxRecords, long leaseMs, long waitMs, LeaseAnswer form) {
        this.form = form;
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
        return form.read(post(leaseUri, leaseBody, "lease", form.mediaType));
    }

    /**
     * Accepts every record of {@code batch} in one acks request sent from the acking thread (one entry per lease: per
     * record, or per run with range leases); completes with the number of records accepted once the answer says
     * every entry took effect, exceptionally otherwise.
     */
    CompletableFuture<Integer> accept(LeasedBatch batch) {
        byte[] body = batch.acceptAll();
        return CompletableFuture.supplyAsync(() -> {
            try {
                return batch.requireAllAccepted(post(acksUri, body, "acks", "application/json"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, acker);
    }

    /**
     * POSTs {@code body} and reads the whole answer. The answer (about 700 KB per lease of 500 records) is read straight
     * into an array of its Content-Length, as a Kafka client reads a response into one buffer of the size its frame
     * names; {@code readAllBytes} (what {@link BlockingHttp#post} does) reads 8 KiB at a time and copies all of it once
     * more, which was the bench worker's largest sample. Keep-alive as {@link BlockingHttp}: the answer is read to its
     * end, the stream closed, and the connection goes back to the JDK's cache.
     */
    private static byte[] post(URI uri, byte[] body, String what, String accept) throws IOException {
        HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
        try {
            c.setConnectTimeout(Math.toIntExact(BlockingHttp.CONNECT_TIMEOUT.toMillis()));
            c.setReadTimeout(Math.toIntExact(READ_TIMEOUT.toMillis()));
            c.setUseCaches(false);
            c.setRequestMethod("POST");
            c.setRequestProperty("Content-Type", "application/json");
            c.setRequestProperty("Accept", accept);
            c.setDoOutput(true);
            c.setFixedLengthStreamingMode(body.length);
            try (OutputStream out = c.getOutputStream()) {
                out.write(body);
            }
            int status = c.getResponseCode();
            InputStream stream = status >= 400 ? c.getErrorStream() : c.getInputStream();
            byte[] answer;
            try (InputStream in = stream == null ? InputStream.nullInputStream() : stream) {
                long length = c.getContentLengthLong();
                if (length < 0 || length > Integer.MAX_VALUE - 8) {
                    answer = in.readAllBytes();
                } else {
                    answer = new byte[(int) length];
                    int read = in.readNBytes(answer, 0, answer.length);
                    if (read < answer.length) {
                        throw new EOFException(what + " answer ended after " + read + " of " + length + " bytes");
                    }
                    in.transferTo(OutputStream.nullOutputStream()); // nothing is left: the connection can be reused
                }
            }
            if (status != 200) {
                throw new IllegalStateException(what + " answered " + status + ": "
                        + new String(answer, StandardCharsets.UTF_8));
            }
            return answer;
        } catch (IOException | RuntimeException e) {
            c.disconnect();
            throw e;
        }
    }

    @Override
    public void close() {
        acker.shutdownNow();
    }
}
