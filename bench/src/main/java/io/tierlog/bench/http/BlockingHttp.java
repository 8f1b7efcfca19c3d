package io.tierlog.bench.http;

import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The bench's Tierlog HTTP client: the JDK's blocking HTTP/1.1 client ({@link HttpURLConnection}, the same stack
 * as the AWS SDK's url-connection client that the raw S3 readers use) with keep-alive. Measured on the bench
 * machine, {@code java.net.http.HttpClient} with {@code BodyHandlers.ofInputStream()} read a 66 MB record-batch body
 * over loopback at 86-188 MB/s where {@code HttpURLConnection} read 180-316 MB/s and a raw socket 193-292 MB/s, so
 * with the async client the read rows measured the client as much as the service.
 *
 * <p>Keep-alive: the JDK keeps idle connections in one process-wide cache per host and port, and a connection goes
 * back into it only once its body has been read to the end and closed; {@link Response#close} does both (for
 * bounded bodies), {@link Response#disconnect} drops the connection instead (for streams that would go on tailing,
 * and to leave no idle connection behind). The cache holds at most {@code http.maxConnections} idle connections
 * per destination (JDK default 5); this class raises that to {@value #MAX_IDLE_CONNECTIONS} unless it was set, so
 * per-partition readers and producers with several requests in flight do not reconnect on every request. The
 * property is read once, on the JDK's first keep-alive use, so it is set when this class is loaded.
 *
 * <p>Timeouts: {@code connectTimeout} bounds the TCP connect, {@code readTimeout} every blocking read (not the whole
 * exchange, unlike {@code HttpRequest.timeout}). Thread-safe: every call opens its own exchange; a {@link Response}
 * is used from one thread.
 */
public final class BlockingHttp {
    /** Connect timeout for the bench's loopback requests: a connect that takes this long is a failure. */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    static final int MAX_IDLE_CONNECTIONS = 256;

    static {
        if (System.getProperty("http.maxConnections") == null) {
            System.setProperty("http.maxConnections", Integer.toString(MAX_IDLE_CONNECTIONS));
        }
    }

    private static final String[] NO_HEADERS = {};

    private BlockingHttp() {
    }

    /**
     * The {@code Authorization: Bearer <token>} header as a name, value pair for the header arguments, or no
     * header for a null token (a service in auth mode {@code none}).
     */
    public static String[] bearer(String token) {
        return token == null ? NO_HEADERS : new String[] {"Authorization", "Bearer " + token};
    }

    /** {@code first} followed by {@code more}: header pairs from two sources. */
    public static String[] headers(String[] first, String... more) {
        String[] all = new String[first.length + more.length];
        System.arraycopy(first, 0, all, 0, first.length);
        System.arraycopy(more, 0, all, first.length, more.length);
        return all;
    }

    /**
     * {@code GET uri} with the given headers (name, value, name, value, ...; {@code Accept} is {@code *}{@code /*}
     * unless given). Returns once the status line and
     * headers are in; the body is the error body for statuses of 400 and up.
     */
    public static Response get(URI uri, Duration connectTimeout, Duration readTimeout, String... headers)
            throws IOException {
        HttpURLConnection c = open(uri, connectTimeout, readTimeout, headers);
        c.setRequestMethod("GET");
        try {
            return new Response(c);
        } catch (IOException | RuntimeException e) {
            c.disconnect();
            throw e;
        }
    }

    /** The status and whole body of a {@link #post}. */
    public record Posted(int status, byte[] body) {
        public String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /**
     * {@code POST uri} of {@code body[offset, offset + length)} with a Content-Length (fixed-length streaming: the
     * bytes go straight to the socket, not into a buffer), then reads the whole response body and closes it, so
     * the connection goes back to the keep-alive cache.
     */
    public static Posted post(URI uri, String contentType, byte[] body, int offset, int length,
                              Duration connectTimeout, Duration readTimeout) throws IOException {
        return post(uri, contentType, body, offset, length, connectTimeout, readTimeout, NO_HEADERS);
    }

    /** As {@link #post}, with more request headers (name, value, ...; e.g. {@link #bearer}). */
    public static Posted post(URI uri, String contentType, byte[] body, int offset, int length,
                              Duration connectTimeout, Duration readTimeout, String... headers) throws IOException {
        String[] all = new String[headers.length + 2];
        all[0] = "Content-Type";
        all[1] = contentType;
        System.arraycopy(headers, 0, all, 2, headers.length);
        HttpURLConnection c = open(uri, connectTimeout, readTimeout, all);
        c.setRequestMethod("POST");
        c.setDoOutput(true);
        c.setFixedLengthStreamingMode(length);
        try {
            try (OutputStream out = c.getOutputStream()) {
                out.write(body, offset, length);
            }
            try (Response r = new Response(c)) {
                return new Posted(r.status(), r.body().readAllBytes());
            }
        } catch (IOException | RuntimeException e) {
            c.disconnect();
            throw e;
        }
    }

    private static HttpURLConnection open(URI uri, Duration connectTimeout, Duration readTimeout, String... headers)
            throws IOException {
        if (headers.length % 2 != 0) {
            throw new IllegalArgumentException("headers come in name, value pairs");
        }
        HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
        c.setConnectTimeout(Math.toIntExact(connectTimeout.toMillis()));
        c.setReadTimeout(Math.toIntExact(readTimeout.toMillis()));
        c.setUseCaches(false);
        c.setInstanceFollowRedirects(false);
        // HttpURLConnection would send "Accept: text/html, image/gif, image/jpeg, */*; q=0.2"; no Accept (as the
        // java.net.http client sends) means */*, so say that unless the caller names one.
        c.setRequestProperty("Accept", "*/*");
        for (int i = 0; i < headers.length; i += 2) {
            c.setRequestProperty(headers[i], headers[i + 1]);
        }
        return c;
    }

    /**
     * One response. {@link #close} reads what is left of the body and closes it, returning the connection to the
     * keep-alive cache (so only for bodies that end); {@link #disconnect} closes the connection.
     */
    public static final class Response implements AutoCloseable {
        private final HttpURLConnection connection;
        private final int status;
        private final InputStream raw;
        private final InputStream body;
        private boolean closed;

        private Response(HttpURLConnection connection) throws IOException {
            this.connection = connection;
            this.status = connection.getResponseCode();
            InputStream in = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
            this.raw = in == null ? InputStream.nullInputStream() : in;
            // A closing parser (Jackson's AUTO_CLOSE_SOURCE) must not close the stream before its end: that would
            // drop the connection. Closing is this response's business.
            this.body = new FilterInputStream(raw) {
                @Override
                public void close() {
                }
            };
        }

        public int status() {
            return status;
        }

        /** The first value of a response header, or null. */
        public String header(String name) {
            return connection.getHeaderField(name);
        }

        /** The body; closing it does nothing (close the response). */
        public InputStream body() {
            return body;
        }

        /**
         * The rest of the body in one array. With a {@code Content-Length} the array has exactly that size and the
         * body is read straight into it, in reads as large as the socket gives; {@code InputStream.readAllBytes}
         * reads 8 KiB at a time and copies everything once more into its result, which cost the record-batch reads
         * a visible share of the client's CPU. Without a length (chunked), {@code readAllBytes}.
         *
         * @throws EOFException if the body ends before its {@code Content-Length}
         */
        public byte[] bytes() throws IOException {
            long length = connection.getContentLengthLong();
            if (length < 0 || length > Integer.MAX_VALUE - 8) {
                return body.readAllBytes();
            }
            byte[] out = new byte[(int) length];
            int read = body.readNBytes(out, 0, out.length);
            if (read < out.length) {
                throw new EOFException("body ended after " + read + " of " + length + " bytes");
            }
            return out;
        }

        /** Up to {@code max} bytes of the rest of the body as UTF-8, for error messages. */
        public String text(int max) throws IOException {
            return new String(body.readNBytes(max), StandardCharsets.UTF_8);
        }

        /** Reads the body to its end and closes it: the connection is reused by a later request. */
        @Override
        public void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            try (InputStream in = raw) {
                in.transferTo(OutputStream.nullOutputStream());
            } catch (IOException e) {
                connection.disconnect();
                throw e;
            }
        }

        /** Closes the connection without reading the rest of the body (a stream that would go on tailing). */
        public void disconnect() {
            closed = true;
            connection.disconnect();
        }
    }
}
