package io.tierlog.service.read;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Read memory from a Netty pooled direct allocator of its own. A hot batch fetch reads the segment file straight into
 * such a buffer and the event loop writes that buffer to the socket: heap memory would cost a copy out of the JDK's
 * temporary direct buffer on the read, and another into a direct one on the write. Pooled allocation neither zeroes
 * memory nor waits for the garbage collector to free it; the holder of a read closes it once its response is
 * written.
 *
 * <p>Why not the HTTP server's allocator ({@code PooledByteBufAllocator.DEFAULT}): Quarkus sets Netty's
 * {@code io.netty.allocator.maxOrder} to 3, so its chunks are 64 KiB and every larger buffer is "huge": allocated
 * with {@code ByteBuffer.allocateDirect}, zeroed, and freed again on release. A profile of 4 MiB fetches put that
 * zeroing at 44% of the read threads' time. This allocator has 8 MiB chunks ({@value #PAGE_SIZE}-byte pages,
 * order {@value #MAX_ORDER}), which hold every fetch up to 8 MiB; no per-thread caches, since a buffer is allocated
 * on a read thread and released on an event loop.
 */
public final class PooledReadMemory implements ReadMemory {
    static final int PAGE_SIZE = 8192;
    static final int MAX_ORDER = 10;

    private final PooledByteBufAllocator allocator;
    private final AtomicLong heldBytes = new AtomicLong();

    public PooledReadMemory() {
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
     * Bytes handed out and not given back: reads whose responses are still being written. It returns to zero when
     * the service is idle; a value that only grows is a leak ({@code tierlog_read_memory_bytes}).
     */
    public long heldBytes() {
        return heldBytes.get();
    }

    /** Buffers allocated outside the pool's chunks (each one zeroed and freed again); for tests. */
    long hugeAllocations() {
        return allocator.metric().directArenas().stream().mapToLong(a -> a.numHugeAllocations()).sum();
    }
}
