package io.tierlog.service.kafka;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.ReferenceCountUtil;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.impl.NetSocketInternal;
import org.jboss.logging.Logger;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One client connection: Kafka's framing (a 4-byte big-endian size, then that many bytes of request), requests
 * handed to {@link KafkaApis}, responses written in request order.
 *
 * <p>Framing rules ({@link RequestFrameReader}): a size below the smallest header or above {@code maxRequestBytes}
 * closes the connection as soon as the 4 size bytes are read, before any of the frame is buffered; a frame whose
 * header or body does not parse closes the connection (Kafka does the same: the stream cannot be trusted after a bad
 * frame). Each request is read from the socket's own buffers into one block of pooled direct memory and parsed
 * there; the block is given back when the request's answer is ready (a produce's records are appended from it).
 * The socket's buffers come through Vert.x' {@link NetSocketInternal#messageHandler} as Netty read them: its
 * public {@code handler} would copy each into a fresh heap buffer first.
 *
 * <p>Ordering and back-pressure: requests may complete out of order (a long-polling fetch, a produce waiting for
 * fsync), but Kafka clients match responses by order, so each request takes a slot in {@link #inFlight} and
 * a response is written only once every earlier one has been. At most {@link #MAX_IN_FLIGHT} requests are in flight:
 * at that many, reading from the socket pauses (TCP then pushes back on the client; bytes already read wait in the
 * frame reader) and resumes when the oldest is answered. All state is touched on the connection's event loop only.
 */
final class KafkaConnection {
    private static final Logger LOG = Logger.getLogger(KafkaConnection.class);
    /** A client's max.in.flight.requests.per.connection is 5 by default; this leaves room for pipelining clients. */
    static final int MAX_IN_FLIGHT = 16;
    /** apiKey + apiVersion + correlationId + client id length. */
    private static final int MIN_FRAME = 10;

    private final NetSocketInternal socket;
    private final KafkaApis apis;
    private final int maxRequestBytes;
    private final Context context;
    private final RequestFrameReader frames;
    private final ArrayDeque<CompletableFuture<Frames.Frame>> inFlight = new ArrayDeque<>();
    private final KafkaSession session;
    private boolean closed;
    /** Kafka's default {@code request.timeout.ms}: how long a request may wait for direct memory. */
    static final long MEMORY_WAIT_LIMIT_NANOS = 30_000_000_000L;
    /** When the reader first found no memory for the request it waits with (0: not waiting), and the retry delay. */
    private long memoryWaitSince;
    private long memoryRetryMs;
    private boolean memoryRetryScheduled;
    /** Reading is paused for a quota throttle until its timer fires. */
    private boolean throttled;

    /**
     * @param principal who the connection is before SASL: anonymous in auth mode none, null in token mode
     * @param memory    where requests are read into (the pool fetched batches are read into)
     */
    KafkaConnection(NetSocket socket, KafkaApis apis, int maxRequestBytes, io.tierlog.access.Principal principal,
                    ReadMemory memory) {
        this.socket = (NetSocketInternal) socket;
        String address = socket.remoteAddress() == null ? "unknown" : socket.remoteAddress().hostAddress();
        int port = socket.remoteAddress() == null ? -1 : socket.remoteAddress().port();
        this.session = new KafkaSession(address, port, principal, !socket.isSsl());
        this.apis = apis;
        this.maxRequestBytes = maxRequestBytes;
        this.context = Vertx.currentContext();
        this.frames = new RequestFrameReader(memory, MIN_FRAME, maxRequestBytes, new RequestFrameReader.Sink() {
            @Override
            public void request(ReadBuffer request) {
                onRequest(request);
            }

            @Override
            public void refused(int size) {
                close("frame of " + size + " bytes refused (tierlog.kafka.max-request-bytes = " + maxRequestBytes + ")");
            }

            @Override
            public void noMemory(int size) {
                waitForMemory(size);
            }
        });
    }

    void start() {
        socket.messageHandler(message -> {
            if (message instanceof ByteBuf bytes) {
                frames.offer(bytes);
            } else {
                ReferenceCountUtil.release(message);
            }
        });
        socket.exceptionHandler(e -> close("read error: " + e));
        socket.closeHandler(v -> {
            closed = true;
            frames.close();
        });
    }

    private void onRequest(ReadBuffer request) {
        memoryWaitSince = 0;
        if (closed) {
            request.close();
            return;
        }
        CompletableFuture<Frames.Frame> reply;
        try {
            reply = apis.handle(request.memory(), session);
        } catch (KafkaApis.MalformedRequest e) {
            request.close();
            close(e.getMessage());
            return;
        } catch (RuntimeException e) {
            request.close();
            LOG.warnf(e, "Kafka connection %s: request failed; closing", socket.remoteAddress());
            close("request failed");
            return;
        }
        inFlight.add(reply);
        if (inFlight.size() >= MAX_IN_FLIGHT && !frames.paused()) {
            frames.pause();
            autoRead().setAutoRead(false);
        }
        // The request's memory (a produce's records) is used until its answer is ready, not longer.
        reply.whenComplete((r, e) -> {
            request.close();
            context.runOnContext(v -> flush());
        });
    }

    private ChannelConfig autoRead() {
        return socket.channelHandlerContext().channel().config();
    }

    /**
     * On the event loop: writes every answered response at the head of the queue, in order, and flushes them
     * together. A frame's memory and files (the fetched batches it carries, as buffers or file regions) are given
     * back once the socket has written it or failed to (a dropped connection fails every pending write), or at once
     * when the connection is closed. Frames go to the channel itself, not through Vert.x' {@code write}, which
     * takes buffers only: one path for every frame keeps them in order.
     */
    private void flush() {
        ChannelHandlerContext ctx = socket.channelHandlerContext();
        boolean wrote = false;
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
            List<Object> messages = frame.messages();
            for (int i = 0; i < messages.size() - 1; i++) {
                ctx.write(messages.get(i));
            }
            ctx.write(messages.get(messages.size() - 1)).addListener(written -> frame.release().run());
            wrote = true;
        }
        if (wrote) {
            ctx.flush();
        }
        if (!throttled && !closed) {
            // While a throttle runs, a new one waits in the session for its timer.
            long throttleMs = session.takeThrottle();
            if (throttleMs > 0) {
                throttleFor(throttleMs);
            }
        }
        if (frames.paused() && inFlight.size() < MAX_IN_FLIGHT && !closed && !throttled) {
            autoRead().setAutoRead(true);
            frames.resume();
        }
    }

    /**
     * A caller over its quota: its answers went out with the throttle time, and the connection reads nothing more
     * for that long, as Kafka mutes a throttled channel (KIP-219); a client that ignores the throttle time waits on
     * TCP instead. A throttle asked while one runs makes reading wait for both.
     */
    private void throttleFor(long ms) {
        throttled = true;
        frames.pause();
        autoRead().setAutoRead(false);
        context.owner().setTimer(ms, id -> {
            throttled = false;
            long again = session.takeThrottle();
            if (closed) {
                return;
            }
            if (again > 0) {
                throttleFor(again);
            } else if (inFlight.size() < MAX_IN_FLIGHT) {
                autoRead().setAutoRead(true);
                frames.resume();
            }
        });
    }

    /**
     * The reader found no direct memory for the next request: stop reading from the socket and try again after a
     * growing delay (10 ms to 1 s), as Kafka mutes a channel until its memory pool has room; a request that finds none
     * for {@link #MEMORY_WAIT_LIMIT_NANOS} closes the connection.
     */
    private void waitForMemory(int size) {
        autoRead().setAutoRead(false);
        long now = System.nanoTime();
        if (memoryWaitSince == 0) {
            memoryWaitSince = now;
            memoryRetryMs = 0;
        } else if (now - memoryWaitSince > MEMORY_WAIT_LIMIT_NANOS) {
            close("no direct memory for a frame of " + size + " bytes in 30 s");
            return;
        }
        if (memoryRetryScheduled) {
            return;
        }
        memoryRetryScheduled = true;
        memoryRetryMs = Math.min(1000, Math.max(10, memoryRetryMs * 2));
        context.owner().setTimer(memoryRetryMs, id -> {
            memoryRetryScheduled = false;
            if (!closed && inFlight.size() < MAX_IN_FLIGHT && !throttled) {
                autoRead().setAutoRead(true);
                frames.resume();
            }
        });
    }

    private void close(String why) {
        if (!closed) {
            LOG.debugf("Kafka connection %s closed: %s", socket.remoteAddress(), why);
            closed = true;
            frames.close();
            socket.close();
        }
    }
}
