package io.tierlog.service.read;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Read memory from Netty's pooled direct allocator, the one the HTTP server's own buffers come from. A hot batch
 * fetch reads the segment file straight into such a buffer and the event loop writes that buffer to the socket:
 * heap memory would cost a copy out of the JDK's temporary direct buffer on the read, and another into a direct one
 * on the write. Pooled allocation neither zeroes memory nor waits for the garbage collector to free it; the holder
 * of a read closes it once its response is written.
 */
public final class PooledReadMemory implements ReadMemory {
    private final ByteBufAllocator allocator;
    private final AtomicLong heldBytes = new AtomicLong();

    public PooledReadMemory() {
        this(PooledByteBufAllocator.DEFAULT);
    }

    PooledReadMemory(ByteBufAllocator allocator) {
        this.allocator = allocator;
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
}
