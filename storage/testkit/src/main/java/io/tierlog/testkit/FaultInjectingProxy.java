package io.tierlog.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on 127.0.0.1 in front of an HTTP server (S3Proxy, LocalStack) that makes the server look down or
 * overloaded on demand, so tests exercise real client retry and error paths without mocks.
 *
 * <ul>
 *   <li>{@link #passThrough()}: relays bytes both ways (the default).</li>
 *   <li>{@link #refuseConnections()}: closes the listening socket, so connects fail with "connection refused"
 *       as when the server is down; {@link #passThrough()} listens again on the same port.</li>
 *   <li>{@link #slowDownNext(int)}: answers the next {@code n} requests with S3's {@code 503 SlowDown}, then
 *       relays again.</li>
 *   <li>{@link #delayResponses(Duration)}: relays, but holds the first bytes of every response for a fixed time,
 *       like the first-byte latency of a remote S3 (tens of ms per request); zero (the default) relays at once.</li>
 * </ul>
 * Switching to a fault closes every open connection, so a client's pooled keep-alive connections cannot slip
 * past it. A 503 answer closes its connection ({@code Connection: close}), so each faulted request is one TCP
 * connection and the count is exact. Thread-safe.
 */
public final class FaultInjectingProxy implements AutoCloseable {

    private static final int MAX_HEAD_BYTES = 64 * 1024;

    private final InetSocketAddress target;
    private final int port;
    private final ExecutorService threads = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "fault-proxy");
        thread.setDaemon(true);
        return thread;
    });
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger slowDownsLeft = new AtomicInteger();
    private final AtomicInteger slowDownsServed = new AtomicInteger();
    private final AtomicInteger connectionsAccepted = new AtomicInteger();
    private volatile long responseDelayNanos;
    // Bumped by every switch to a fault: a relay forwards bytes only while the generation it was accepted in is
    // current, so a request racing the switch on a pooled connection can never slip through to the server.
    private volatile int generation;
    private ServerSocket listener; // guarded by this
    private boolean closed; // guarded by this

    private FaultInjectingProxy(InetSocketAddress target, ServerSocket listener) {
        this.target = target;
        this.listener = listener;
        this.port = listener.getLocalPort();
        acceptOn(listener);
    }

    /** Starts a pass-through proxy on a free port of 127.0.0.1 in front of {@code target}. */
    public static FaultInjectingProxy start(InetSocketAddress target) {
        Objects.requireNonNull(target, "target");
        return new FaultInjectingProxy(target, bind(0));
    }

    /** Starts a pass-through proxy in front of the host and port of {@code endpoint}. */
    public static FaultInjectingProxy start(URI endpoint) {
        return start(new InetSocketAddress(endpoint.getHost(), endpoint.getPort()));
    }

    /** The proxy's port, fixed for its lifetime. */
    public int port() {
        return port;
    }

    /** {@code http://127.0.0.1:<port>}: point the client here instead of at the server. */
    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** Relays all requests again; listens again if connections were being refused. */
    public synchronized void passThrough() {
        slowDownsLeft.set(0);
        responseDelayNanos = 0;
        if (listener == null && !closed) {
            listener = bind(port);
            acceptOn(listener);
        }
    }

    /** Stops listening, so new connections are refused; open connections are closed. */
    public synchronized void refuseConnections() {
        slowDownsLeft.set(0);
        generation++;
        closeListener();
        closeOpenConnections();
    }

    /** Answers the next {@code requests} requests with HTTP 503 SlowDown, then relays again. */
    public synchronized void slowDownNext(int requests) {
        if (requests < 0) {
            throw new IllegalArgumentException("requests must be >= 0: " + requests);
        }
        passThrough();
        slowDownsLeft.set(requests);
        generation++;
        closeOpenConnections();
    }

    /**
     * Relays, holding each response for {@code delay} before its first byte is passed on ({@link Duration#ZERO}
     * relays at once). A response is the first bytes the server sends after the client sent request bytes on
     * that connection, so each request/response exchange on a keep-alive connection waits once; that holds for
     * clients that do not pipeline requests (the AWS SDK does not). Open connections are kept, and the new
     * delay applies to responses that start after this call. Exchanges on different connections wait in
     * parallel, as concurrent requests to S3 do. {@link #passThrough()} resets the delay to zero.
     */
    public synchronized void delayResponses(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must be >= 0: " + delay);
        }
        passThrough();
        responseDelayNanos = delay.toNanos();
    }

    /** How many 503 answers the proxy has given so far. */
    public int slowDownsServed() {
        return slowDownsServed.get();
    }

    /** How many connections the proxy has accepted so far (relayed or faulted). */
    public int connectionsAccepted() {
        return connectionsAccepted.get();
    }

    @Override
    public synchronized void close() {
        closed = true;
        closeListener();
        closeOpenConnections();
        threads.shutdownNow();
    }

    private static ServerSocket bind(int port) {
        try {
            ServerSocket socket = new ServerSocket();
            // Lets passThrough() re-bind the same port while old connections sit in TIME_WAIT.
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
            return socket;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on 127.0.0.1:" + port, e);
        }
    }

    private void closeListener() {
        if (listener != null) {
            closeQuietly(listener);
            listener = null;
        }
    }

    private void closeOpenConnections() {
        for (Socket socket : open) {
            reset(socket);
        }
        open.clear();
    }

    /** Closes with an RST rather than a FIN, so the peer cannot mistake the end for a clean close. */
    private static void reset(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
        } catch (IOException e) {
            // already closed
        }
        closeQuietly(socket);
    }

    private void acceptOn(ServerSocket server) {
        threads.execute(() -> {
            while (!server.isClosed()) {
                try {
                    Socket client = server.accept();
                    connectionsAccepted.incrementAndGet();
                    int acceptedIn;
                    synchronized (this) {
                        if (listener != server) { // refuseConnections() closed this listener while it accepted
                            reset(client);
                            return;
                        }
                        open.add(client);
                        acceptedIn = generation;
                    }
                    boolean fault = slowDownsLeft.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
                    threads.execute(fault ? () -> answerSlowDown(client) : () -> relay(client, acceptedIn));
                } catch (IOException e) {
                    return; // listener closed by refuseConnections() or close()
                }
            }
        });
    }

    private void relay(Socket client, int acceptedIn) {
        Socket server = new Socket();
        open.add(server);
        try {
            server.connect(target, 5_000);
        } catch (IOException e) {
            closeQuietly(client);
            closeQuietly(server);
            return;
        }
        // Set by the request direction before it forwards bytes (so before the server can answer them) and
        // cleared by the first response bytes: each exchange is delayed once, however many reads it spans.
        AtomicBoolean requestSent = new AtomicBoolean();
        threads.execute(() -> pump(server, client, requestSent, true, acceptedIn));
        pump(client, server, requestSent, false, acceptedIn);
    }

    /**
     * Copies {@code from} to {@code to} until EOF, then half-closes {@code to} so the peer sees the EOF too. The
     * request direction marks {@code requestSent}; the response direction waits the response delay when it
     * consumes a mark.
     */
    private void pump(Socket from, Socket to, AtomicBoolean requestSent, boolean responses, int acceptedIn) {
        try (InputStream in = from.getInputStream()) {
            OutputStream out = to.getOutputStream();
            byte[] buffer = new byte[64 * 1024];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                if (generation != acceptedIn) {
                    throw new IOException("the proxy switched to a fault since this connection was accepted");
                }
                if (!responses) {
                    requestSent.set(true);
                } else if (requestSent.getAndSet(false)) {
                    holdResponse();
                }
                out.write(buffer, 0, n);
                out.flush();
            }
            to.shutdownOutput();
        } catch (IOException e) {
            reset(to); // one side failed: fail the other so the client sees a broken connection
            reset(from);
        } finally {
            open.remove(from);
        }
    }

    /** The injected latency itself: a deliberate wait, not a poll. close() interrupts it via shutdownNow(). */
    private void holdResponse() throws IOException {
        long nanos = responseDelayNanos;
        if (nanos > 0) {
            try {
                Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("proxy closed while delaying a response", e);
            }
        }
    }

    private void answerSlowDown(Socket client) {
        try (client) {
            InputStream in = client.getInputStream();
            String head = readHead(in);
            // Drain the body so closing the socket does not reset the connection before the client reads the
            // 503 — unless the client waits for "100 Continue", in which case it has sent no body yet.
            if (!head.contains("\nexpect: 100-continue")) {
                long length = contentLength(head);
                while (length > 0) {
                    long skipped = in.skip(length);
                    if (skipped <= 0) {
                        if (in.read() < 0) {
                            break;
                        }
                        skipped = 1;
                    }
                    length -= skipped;
                }
            }
            byte[] body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code>"
                    + "<Message>Please reduce your request rate.</Message><RequestId>fault-proxy</RequestId></Error>")
                    .getBytes(StandardCharsets.UTF_8);
            String response = "HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: "
                    + body.length + "\r\nConnection: close\r\n\r\n";
            OutputStream out = client.getOutputStream();
            out.write(response.getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            slowDownsServed.incrementAndGet();
        } catch (IOException e) {
            // The client gave up first; it will count this as a failed attempt all the same.
        } finally {
            open.remove(client);
        }
    }

    /** Reads the request line and headers, lower-cased, up to the blank line. */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] terminator = {'\r', '\n', '\r', '\n'};
        while (matched < 4) {
            int b = in.read();
            if (b < 0 || head.size() > MAX_HEAD_BYTES) {
                break;
            }
            head.write(b);
            matched = b == terminator[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1).toLowerCase(Locale.ROOT);
    }

    private static long contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.startsWith("content-length:")) {
                return Long.parseLong(line.substring("content-length:".length()).trim());
            }
        }
        return 0;
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // closing to fail fast; nothing useful to do with an error here
        }
    }
}
