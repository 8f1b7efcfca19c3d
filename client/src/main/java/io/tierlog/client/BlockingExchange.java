package io.tierlog.client;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.URI;

/**
 * One produce or fetch exchange on the JDK's blocking HTTP/1.1 client ({@link HttpURLConnection}), run on the
 * calling thread. The record paths use it rather than {@code java.net.http.HttpClient} (which the JSON calls keep):
 * measured in the client-produce benchmark (docs/BENCHMARKS.md, "Client producer"; docs/adr/0031), the async
 * client read 2 MiB fetch answers through its one selector thread at about half the rate of a blocking connection
 * per reader, cost 2.5-3x the client CPU per produced record, and on a machine with 2 cores ran every answer's
 * continuation on a new thread (its default executor when the common pool has parallelism 1).
 *
 * <p>Keep-alive: a connection goes back to the JDK's process-wide cache when its body was read to the end and
 * closed, as here; on any I/O error it is dropped. The cache keeps at most {@code http.maxConnections} idle
 * connections per host and port (JDK default 5, fewer than a consumer of 8 partitions has fetches in flight, so
 * the rest would reconnect on every fetch); this class raises it to {@value #MAX_IDLE_CONNECTIONS} unless the
 * application set it. The JDK reads the property once, at its first keep-alive use.
 *
 * <p>No proxy (as the JSON calls' {@code HttpClient}). Timeouts: {@code connectTimeoutMs} bounds the TCP connect,
 * {@code readTimeoutMs} every blocking read (a silent service, not a slow large body). Thread-safe: every call
 * opens its own exchange.
 */
final class BlockingExchange {
    static final int MAX_IDLE_CONNECTIONS = 64;

    static {
        if (System.getProperty("http.maxConnections") == null) {
            System.setProperty("http.maxConnections", Integer.toString(MAX_IDLE_CONNECTIONS));
        }
    }

    /** The status, whole body and the headers the record paths read. */
    record Answer(int status, byte[] body, String retryAfter, String nextOffset) {
    }

    private BlockingExchange() {
    }

    /**
     * {@code method uri} with {@code body[0, length)} (null: none) and reads the whole answer (the error body for 4xx and 5xx).
     *
     * @param authorization the {@code Authorization} header's value, or null
     * @throws IOException when there was no (whole) answer; the request may or may not have taken effect
     */
    static Answer exchange(URI uri, String method, String authorization, String accept, String contentType,
                           byte[] body, int length, int connectTimeoutMs, int readTimeoutMs) throws IOException {
        HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection(Proxy.NO_PROXY);
        try {
            c.setConnectTimeout(connectTimeoutMs);
            c.setReadTimeout(readTimeoutMs);
            c.setUseCaches(false);
            c.setInstanceFollowRedirects(false);
            c.setRequestMethod(method);
            c.setRequestProperty("Accept", accept);
            if (authorization != null) {
                c.setRequestProperty("Authorization", authorization);
            }
            if (body != null) {
                c.setRequestProperty("Content-Type", contentType);
                c.setDoOutput(true);
                // Straight to the socket with a Content-Length, not into a buffer first.
                c.setFixedLengthStreamingMode(length);
                try (OutputStream out = c.getOutputStream()) {
                    out.write(body, 0, length);
                }
            }
            int status = c.getResponseCode();
            byte[] answer;
            try (InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream()) {
                answer = in == null ? new byte[0] : readAll(in, c.getContentLengthLong());
            }
            return new Answer(status, answer, c.getHeaderField("Retry-After"), c.getHeaderField("Tierlog-Next-Offset"));
        } catch (IOException | RuntimeException e) {
            c.disconnect();
            throw e;
        }
    }

    /** With a Content-Length, read straight into an array of that size (no 8 KiB steps and final copy). */
    private static byte[] readAll(InputStream in, long length) throws IOException {
        if (length < 0 || length > Integer.MAX_VALUE - 8) {
            return in.readAllBytes();
        }
        byte[] out = new byte[(int) length];
        int read = in.readNBytes(out, 0, out.length);
        if (read < out.length) {
            throw new EOFException("answer body ended after " + read + " of " + length + " bytes");
        }
        return out;
    }
}
