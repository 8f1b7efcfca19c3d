package io.tierlog.service.kafka;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import io.vertx.core.parsetools.RecordParser;
import org.jboss.logging.Logger;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * One client connection: Kafka's framing (a 4-byte big-endian size, then that many bytes of request), requests
 * handed to {@link KafkaApis}, responses written in request order.
 *
 * <p>Framing rules: a size below the smallest header or above {@code maxRequestBytes} closes the connection as soon
 * as the 4 size bytes are read, before any of the frame is buffered; a frame whose header or body does not parse
 * closes the connection (Kafka does the same: the stream cannot be trusted after a bad frame).
 *
 * <p>Ordering and back-pressure: requests may complete out of order (a long-polling fetch, a produce waiting for
 * fsync), but Kafka clients match responses by order, so each request takes a slot in {@link #inFlight} and
 * a response is written only once every earlier one has been. At most {@link #MAX_IN_FLIGHT} requests are in flight:
 * at that many, reading from the socket pauses (TCP then pushes back on the client) and resumes when the oldest is
 * answered. All state is touched on the connection's event loop only.
 */
final class KafkaConnection {
    private static final Logger LOG = Logger.getLogger(KafkaConnection.class);
    /** A client's max.in.flight.requests.per.connection is 5 by default; this leaves room for pipelining clients. */
    static final int MAX_IN_FLIGHT = 16;
    /** apiKey + apiVersion + correlationId + client id length. */
    private static final int MIN_FRAME = 10;

    private final NetSocket socket;
    private final KafkaApis apis;
    private final int maxRequestBytes;
    private final Context context;
    private final RecordParser parser;
    private final ArrayDeque<CompletableFuture<Frames.Frame>> inFlight = new ArrayDeque<>();
    private final KafkaSession session;
    private boolean readingSize = true;
    private boolean paused;
    private boolean closed;

    /** @param principal who the connection is before SASL: anonymous in auth mode none, null in token mode */
    KafkaConnection(NetSocket socket, KafkaApis apis, int maxRequestBytes, io.tierlog.access.Principal principal) {
        this.socket = socket;
        this.session = new KafkaSession(socket.remoteAddress() == null ? "unknown" : socket.remoteAddress().host(),
                principal);
        this.apis = apis;
        this.maxRequestBytes = maxRequestBytes;
        this.context = Vertx.currentContext();
        this.parser = RecordParser.newFixed(4, socket);
    }

    void start() {
        parser.handler(this::onChunk);
        parser.exceptionHandler(e -> close("read error: " + e));
        socket.closeHandler(v -> closed = true);
    }

    private void onChunk(Buffer chunk) {
        if (closed) {
            return;
        }
        if (readingSize) {
            int size = chunk.getInt(0);
            if (size < MIN_FRAME || size > maxRequestBytes) {
                close("frame of " + size + " bytes refused (tierlog.kafka.max-request-bytes = " + maxRequestBytes + ")");
                return;
            }
            readingSize = false;
            parser.fixedSizeMode(size);
            return;
        }
        readingSize = true;
        parser.fixedSizeMode(4);
        CompletableFuture<Frames.Frame> reply;
        try {
            // A heap copy: the request's records are appended from it on a worker after this chunk is recycled.
            reply = apis.handle(ByteBuffer.wrap(chunk.getBytes()), session);
        } catch (KafkaApis.MalformedRequest e) {
            close(e.getMessage());
            return;
        }
        inFlight.add(reply);
        if (inFlight.size() >= MAX_IN_FLIGHT && !paused) {
            paused = true;
            parser.pause();
        }
        reply.whenComplete((r, e) -> context.runOnContext(v -> flush()));
    }

    /**
     * On the event loop: writes every answered response at the head of the queue, in order. A frame's memory (the
     * fetched batches it carries) is given back once the socket has written it, or at once when the connection is
     * closed.
     */
    private void flush() {
        while (!inFlight.isEmpty() && inFlight.peek().isDone()) {
            CompletableFuture<Frames.Frame> head = inFlight.poll();
            Frames.Frame frame;
            try {
                frame = head.join();
            } catch (RuntimeException e) {
                if (!closed) {
                    // KafkaApis answers every error it can name; this is a response that could not be encoded.
                    LOG.warnf(e, "Kafka connection %s: no response could be written; closing", socket.remoteAddress());
                    close("response failed");
                }
                continue;
            }
            if (frame == null) {
                continue;
            }
            if (closed) {
                frame.release().run();
                continue;
            }
            socket.write(frame.bytes()).onComplete(written -> frame.release().run());
        }
        if (paused && inFlight.size() < MAX_IN_FLIGHT && !closed) {
            paused = false;
            parser.resume();
        }
    }

    private void close(String why) {
        if (!closed) {
            LOG.debugf("Kafka connection %s closed: %s", socket.remoteAddress(), why);
            closed = true;
            socket.close();
        }
    }
}
