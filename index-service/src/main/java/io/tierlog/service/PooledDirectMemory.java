package io.tierlog.service;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Direct memory from a Netty pooled allocator of its own, for the record-batch paths whose bytes go between a file
 * and a socket. A hot batch fetch reads the segment file straight into such a buffer and the event loop writes that
 * buffer to the socket; a record-batch produce body is gathered into one and written to the segment from it. Heap
 * memory would cost a copy through the JDK's temporary direct buffer on every file read or write, and another into
 * a direct one on the socket write. Pooled allocation neither zeroes memory nor waits for the garbage collector to
 * free it; the holder closes a buffer once its bytes are written (a fetch) or appended (a produce).
 *
 * <p>Why not the HTTP server's allocator ({@code PooledByteBufAllocator.DEFAULT}): Quarkus sets Netty's
 * {@code io.netty.allocator.maxOrder} to 3, so its chunks are 64 KiB and every larger buffer is "huge": allocated
 * with {@code ByteBuffer.allocateDirect}, zeroed, and freed again on release. A profile of 4 MiB fetches put that
 * zeroing at 44% of the read threads' time. This allocator has 8 MiB chunks ({@value #PAGE_SIZE}-byte pages,
 * order {@value #MAX_ORDER}), which hold every fetch and produce body up to 8 MiB; no per-thread caches, since a
 * buffer is allocated on one thread and released on another (a read thread and an event loop, or the reverse).
 */
public final class PooledDirectMemory implements ReadMemory {
    static final int PAGE_SIZE = 8192;
    static final int MAX_ORDER = 10;

    private final PooledByteBufAllocator allocator;
    private final AtomicLong heldBytes = new AtomicLong();

    public PooledDirectMemory() {
        this.allocator = new PooledByteBufAllocator(true, 0, Math.max(1, Runtime.getRuntime().availableProcessors()),
                PAGE_SIZE, MAX_ORDER, 0, 0, false);
    }

    @Override
    public ReadBuffer allocate(int capacity) {
        ByteBuf buf = allocator.directBuffer(capacity, capacity);
        heldBytes.addAndGet(capacity);
        return new ReadBuffer(buf.nioBuffer(0, capacity), () -> {
            heldBytes.addAndGet(-capacity);
            buf.release();
        });
    }

    /**
     * Bytes handed out and not given back: reads whose responses are still being written, produce bodies not yet
     * appended. It returns to zero when
     * the service is idle; a value that only grows is a leak ({@code tierlog_direct_memory_bytes}).
     */
    public long heldBytes() {
        return heldBytes.get();
    }

    /** Buffers allocated outside the pool's chunks (each one zeroed and freed again); for tests. */
    long hugeAllocations() {
        return allocator.metric().directArenas().stream().mapToLong(a -> a.numHugeAllocations()).sum();
    }
}
