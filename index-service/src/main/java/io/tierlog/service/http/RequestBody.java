package io.tierlog.service.http;

import io.netty.buffer.ByteBuf;
import io.tierlog.log.ErrorType;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;
import io.tierlog.log.TierlogException;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;

import java.nio.ByteBuffer;
import java.util.Map;

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
        long declared = declaredLength(request);
        return declared >= 0 && declared <= maxBytes
                ? readSized(request, memory.allocate((int) declared))
                : readChunked(request, maxBytes);
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
