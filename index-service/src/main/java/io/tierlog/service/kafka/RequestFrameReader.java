package io.tierlog.service.kafka;

import io.netty.buffer.ByteBuf;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Kafka's request framing over one connection's incoming bytes: a 4-byte big-endian size, then that many bytes of
 * request. Each request is copied once, from the socket's buffers straight into a block of {@link ReadMemory} of
 * exactly its announced size, and handed on whole; a request's records are appended to the log from that block, so
 * nothing grows or is copied again on the way (ADR 0029).
 *
 * <p>A size outside {@code [minFrame, maxFrame]} is refused as soon as its 4 bytes are read, before any memory is
 * taken for it; after a refusal the reader drops everything it is offered. As in Kafka's broker, a request's memory
 * is taken at its announced size when its size is read, and when the JVM has no direct memory left for it the reader
 * pauses itself (Kafka mutes the channel) and tells the sink, which resumes it to try again once memory may have
 * been given back; the bytes after the size are kept meanwhile. Pausing stops the handing on of requests:
 * bytes offered while paused are kept (not copied) until {@link #resume}. The sink may pause or close the reader from
 * inside {@link Sink#request}.
 *
 * <p>Memory: the reader owns every buffer it is offered and releases it once its bytes are copied (or dropped); a
 * request's block belongs to the sink once handed on; {@link #close} gives back the block of a request not yet
 * complete and the bytes kept while paused. Not thread-safe: one connection's event loop calls it.
 */
final class RequestFrameReader {
    /** Where complete requests go. */
    interface Sink {
        /** One whole request without its size prefix, position 0 to its size; the sink closes the block. */
        void request(ReadBuffer request);

        /** The next frame announced {@code size} bytes, outside the bounds; no further request will come. */
        void refused(int size);

        /**
         * The JVM has no direct memory left for the next frame's {@code size} bytes: the reader has paused itself,
         * and {@link #resume} tries again.
         */
        void noMemory(int size);
    }

    private final ReadMemory memory;
    private final int minFrame;
    private final int maxFrame;
    private final Sink sink;
    /** Bytes offered while paused (or not yet read when a pause came), oldest first. */
    private final ArrayDeque<ByteBuf> kept = new ArrayDeque<>();
    /** Size bytes read so far of the next frame (0-4), and their value. */
    private int sizeBytesRead;
    private int size;
    /** The request being filled, or null while reading a size. */
    private ReadBuffer request;
    private ByteBuffer fill;
    private boolean paused;
    private boolean stopped;
    private boolean reading;

    RequestFrameReader(ReadMemory memory, int minFrame, int maxFrame, Sink sink) {
        this.memory = memory;
        this.minFrame = minFrame;
        this.maxFrame = maxFrame;
        this.sink = sink;
    }

    /** Takes {@code bytes} (and the duty to release it) and hands on every request it completes, unless paused. */
    void offer(ByteBuf bytes) {
        if (stopped) {
            bytes.release();
            return;
        }
        kept.add(bytes);
        readKept();
    }

    void pause() {
        paused = true;
    }

    /** Hands on the requests completed by bytes kept while paused, until paused again. */
    void resume() {
        paused = false;
        readKept();
    }

    boolean paused() {
        return paused;
    }

    /** Gives back all memory the reader holds; later offers are released at once. Idempotent. */
    void close() {
        stopped = true;
        releaseAll();
    }

    private void readKept() {
        if (reading) {
            return; // a sink that resumes from inside request(): the loop below goes on
        }
        reading = true;
        try {
            while (!paused && !stopped && !kept.isEmpty()) {
                ByteBuf head = kept.peek();
                read(head);
                if (!stopped && !head.isReadable()) {
                    kept.poll().release();
                }
            }
        } finally {
            reading = false;
        }
    }

    /** Reads from {@code in} until it is empty, a request is handed on and the sink paused, or the reader stops. */
    private void read(ByteBuf in) {
        while (in.isReadable() && !paused && !stopped) {
            if (request == null) {
                while (sizeBytesRead < 4 && in.isReadable()) {
                    size = size << 8 | in.readUnsignedByte();
                    sizeBytesRead++;
                }
                if (sizeBytesRead < 4) {
                    return;
                }
                if (size < minFrame || size > maxFrame) {
                    stopped = true;
                    releaseAll();
                    sink.refused(size);
                    return;
                }
                try {
                    request = memory.allocate(size);
                } catch (OutOfMemoryError noDirectMemory) {
                    // The JVM's direct memory limit is reached (nothing was allocated): wait, with the size read and
                    // the bytes after it kept, until the sink resumes.
                    paused = true;
                    sink.noMemory(size);
                    return;
                }
                fill = request.memory().duplicate().clear();
            }
            int n = Math.min(in.readableBytes(), fill.remaining());
            fill.limit(fill.position() + n);
            in.readBytes(fill);
            fill.limit(fill.capacity());
            if (!fill.hasRemaining()) {
                ReadBuffer whole = request;
                request = null;
                fill = null;
                sizeBytesRead = 0;
                size = 0;
                sink.request(whole);
            }
        }
    }

    private void releaseAll() {
        if (request != null) {
            request.close();
            request = null;
            fill = null;
        }
        ByteBuf b;
        while ((b = kept.poll()) != null) {
            b.release();
        }
    }
}
