package io.tierlog.service.http;

import io.netty.buffer.ByteBuf;
import io.tierlog.log.ErrorType;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;
import io.tierlog.log.TierlogException;
import io.tierlog.service.PooledArrays;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.RoutingContext;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * Reads a request body into one buffer of exactly its size, for a route that hands the bytes to a file write. With a
 * {@code Content-Length} the buffer comes from direct memory, sized once: the body is copied from the network
 * buffers exactly once, and the file write takes direct memory without the JDK's copy into a temporary direct
 * buffer. Quarkus REST, by comparison, copied a 1 MB produce body three times on the way to the file.
 *
 * <p>A chunked body (no length) is gathered on the heap, refused with 413 {@code request-too-large} once it passes
 * {@code maxBytes}. A declared length above {@code maxBytes} never gets here ({@link RequestSizeRoute}).
 */
public final class RequestBody {
    private RequestBody() {
    }

    /**
     * The body of {@code request}, read on its event loop; the caller closes the buffer. Must be called before the
     * event loop returns from the request's headers, so no chunk has been delivered yet.
     */
    public static Future<ReadBuffer> read(HttpServerRequest request, ReadMemory memory, int maxBytes) {
        continueIfExpected(request);
        long declared = declaredLength(request);
        return declared >= 0 && declared <= maxBytes
                ? readSized(request, memory.allocate((int) declared))
                : readChunked(request, maxBytes);
    }

    /** {@link #read}, copied into an array for a parser that wants one; the pooled memory goes back at once. */
    public static Future<byte[]> readBytes(HttpServerRequest request, ReadMemory memory, int maxBytes) {
        return read(request, memory, maxBytes).map(buffer -> {
            try (buffer) {
                byte[] bytes = new byte[buffer.memory().remaining()];
                buffer.memory().get(bytes);
                return bytes;
            }
        });
    }

    /**
     * Answers a request whose body was being read, or handled, with the problem for {@code cause}. Refused before the
     * whole body was read, the connection closes after the answer: the rest of the body cannot be told from a next
     * request.
     */
    public static void fail(RoutingContext ctx, Throwable cause) {
        if (!ctx.request().isEnded()) {
            ctx.response().putHeader("Connection", "close");
        }
        ProblemMapper.respond(ctx.response(), cause);
    }

    /**
     * Hands {@code body}, once read, to {@code work} on a worker thread (an append blocks on its partition's file lock
     * and fsync), closes it after, and answers with the JSON {@code work} returns or the problem for what failed.
     */
    public static <B extends AutoCloseable> void answerOnWorker(RoutingContext ctx, Future<B> body,
                                                                Function<B, byte[]> work) {
        body.compose(read -> ctx.vertx().executeBlocking(() -> {
                    try (read) {
                        return work.apply(read);
                    }
                }, false))
                .onComplete(done -> {
                    if (done.failed()) {
                        fail(ctx, done.cause());
                    } else {
                        ctx.response().putHeader("Content-Type", "application/json").end(Buffer.buffer(done.result()));
                    }
                });
    }

    /**
     * Reads the body as an array ({@link #readBytes}), starts {@code work} on it, and answers on the request's event
     * loop through {@code send} with what the work completes with, or with the problem for what failed: the read, the
     * work's own checks before it starts (it may throw), or the work itself.
     */
    public static <T> void answerAsync(RoutingContext ctx, ReadMemory memory, int maxBytes,
                                       Function<byte[], ? extends CompletionStage<T>> work,
                                       BiConsumer<HttpServerResponse, T> send) {
        Context context = Vertx.currentContext();
        readBytes(ctx.request(), memory, maxBytes).onComplete(read -> {
            if (read.failed()) {
                fail(ctx, read.cause());
                return;
            }
            CompletionStage<T> started;
            try {
                started = work.apply(read.result());
            } catch (RuntimeException e) {
                // A bad request, or a pool that no longer takes work (the service is stopping).
                ProblemMapper.respond(ctx.response(), e);
                return;
            }
            started.whenComplete((answer, error) -> context.runOnContext(v -> {
                if (error != null) {
                    ProblemMapper.respond(ctx.response(), error);
                } else {
                    send.accept(ctx.response(), answer);
                }
            }));
        });
    }

    private static Future<ReadBuffer> readSized(HttpServerRequest request, ReadBuffer body) {
        Promise<ReadBuffer> done = Promise.promise();
        ByteBuffer target = body.memory();
        request.handler(chunk -> {
            ByteBuf bytes = chunk.getByteBuf();
            // The HTTP codec delivers no more than Content-Length bytes; a limit here would only catch a codec bug.
            target.limit(target.position() + bytes.readableBytes());
            bytes.getBytes(bytes.readerIndex(), target);
        });
        request.exceptionHandler(e -> {
            // Only before the body was handed on: after that its holder owns (and closes) the buffer.
            if (done.tryFail(e)) {
                body.close();
            }
        });
        request.endHandler(v -> {
            target.flip();
            done.tryComplete(body);
        });
        request.resume();
        return done.future();
    }

    /**
     * A body read into a pooled heap array: {@code bytes[0, length)}. The holder closes it once the bytes are no
     * longer read, which gives the array back.
     */
    public static final class InArray implements AutoCloseable {
        private final byte[] bytes;
        private final int length;
        private final PooledArrays pool;
        private boolean closed;

        InArray(byte[] bytes, int length, PooledArrays pool) {
            this.bytes = bytes;
            this.length = length;
            this.pool = pool;
        }

        /** The array; the body is its first {@link #length} bytes, the rest is stale. */
        public byte[] bytes() {
            return bytes;
        }

        public int length() {
            return length;
        }

        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                pool.giveBack(bytes);
            }
        }
    }

    /**
     * The body of {@code request}, of its declared {@code Content-Length} (which the caller has checked against the
     * request limit; {@link RequestSizeRoute} answers larger ones), read on its event loop into one pooled heap
     * array: one copy from the network buffers, and no array grown while the chunks come in. The caller closes it.
     * Same calling rule as {@link #read}.
     */
    public static Future<InArray> readArray(HttpServerRequest request, PooledArrays pool, int declaredLength) {
        Promise<InArray> done = Promise.promise();
        continueIfExpected(request);
        InArray body = new InArray(pool.take(declaredLength), declaredLength, pool);
        int[] filled = {0};
        request.handler(chunk -> {
            if (done.future().isComplete()) {
                return;   // failed already: the array is given back
            }
            ByteBuf bytes = chunk.getByteBuf();
            int n = bytes.readableBytes();
            if (filled[0] + n > declaredLength) {
                // The HTTP codec delivers no more than Content-Length bytes; this would be a codec bug.
                if (done.tryFail(new IllegalStateException("request body longer than its Content-Length"))) {
                    body.close();
                }
                return;
            }
            bytes.getBytes(bytes.readerIndex(), body.bytes, filled[0], n);
            filled[0] += n;
        });
        request.exceptionHandler(e -> {
            // Only before the body was handed on: after that its holder owns (and closes) it.
            if (done.tryFail(e)) {
                body.close();
            }
        });
        request.endHandler(v -> {
            if (filled[0] != declaredLength) {
                if (done.tryFail(new IllegalStateException("request body shorter than its Content-Length"))) {
                    body.close();
                }
                return;
            }
            done.tryComplete(body);
        });
        request.resume();
        return done.future();
    }

    private static Future<ReadBuffer> readChunked(HttpServerRequest request, int maxBytes) {
        Promise<ReadBuffer> done = Promise.promise();
        Buffer gathered = Buffer.buffer();
        request.handler(chunk -> {
            if (gathered.length() + chunk.length() > maxBytes) {
                done.tryFail(new TierlogException(ErrorType.REQUEST_TOO_LARGE, "request body exceeds "
                        + "max.request.bytes = " + maxBytes, Map.of("maxRequestBytes", maxBytes)));
            } else if (!done.future().isComplete()) {
                gathered.appendBuffer(chunk);
            }
        });
        request.exceptionHandler(done::tryFail);
        request.endHandler(v -> done.tryComplete(new ReadBuffer(ByteBuffer.wrap(gathered.getBytes()), () -> { })));
        request.resume();
        return done.future();
    }

    /**
     * Answers {@code Expect: 100-continue} with {@code 100 Continue}, as Quarkus REST does for the requests it reads:
     * the HTTP server leaves it to the application, and a client that asked (curl does for bodies over 1 MiB) waits
     * for it, a second in curl's case, before it sends the body.
     */
    static void continueIfExpected(HttpServerRequest request) {
        String expect = request.getHeader("Expect");
        if (expect != null && expect.trim().equalsIgnoreCase("100-continue")
                && request.version() != HttpVersion.HTTP_1_0) {
            request.response().writeContinue();
        }
    }

    /** The request's {@code Content-Length}, or -1 when it has none (chunked) or an unreadable one. */
    public static long declaredLength(HttpServerRequest request) {
        String declared = request.getHeader("Content-Length");
        try {
            return declared == null ? -1 : Long.parseLong(declared.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
