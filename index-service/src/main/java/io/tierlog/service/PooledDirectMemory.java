package io.tierlog.service;

import io.netty.util.internal.PlatformDependent;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Direct memory for the record-batch paths whose bytes go between a file and a socket, kept for reuse. A hot batch
 * fetch reads the segment file straight into such a buffer and the event loop writes that buffer to the socket; a
 * record-batch produce body is gathered into one and written to the segment from it. Heap memory would cost a copy
 * through the JDK's temporary direct buffer on every file read or write, and another into a direct one on the
 * socket write. The holder closes a buffer once its bytes are written (a fetch) or appended (a produce).
 *
 * <p>Blocks come in power-of-two sizes from {@value #MIN_BLOCK} bytes to {@value #MAX_BLOCK} bytes; a request gets
 * a view of exactly its size on the smallest block that holds it. A released block goes back on its size's free
 * list (last in, first out, so the memory in use stays warm) as long as the idle blocks total at most
 * {@code idleLimitBytes}; beyond that, and for requests above the largest size, memory is freed at once rather than
 * left to the garbage collector.
 *
 * <p>Why not a Netty pooled allocator: its chunks are freed as soon as nothing is allocated in them, so under
 * megabyte-sized buffers that come and go it allocated (and the JDK zeroed) a new chunk again and again; a profile
 * of 8 producers of 1 MB batches put that zeroing at 12% of the event loops' time. The HTTP server's own allocator is
 * worse still for this: Quarkus sets {@code io.netty.allocator.maxOrder} to 3, so every buffer above 64 KiB is
 * allocated outside its pool.
 */
public final class PooledDirectMemory implements ReadMemory {
    static final int MIN_BLOCK = 4096;
    static final int MAX_BLOCK = 8 << 20;
    /** Idle blocks kept by default: a few concurrent 4 MiB fetches and 1 MiB produce bodies. */
    public static final long DEFAULT_IDLE_LIMIT_BYTES = 64L << 20;

    private static final int MIN_SHIFT = Integer.numberOfTrailingZeros(MIN_BLOCK);
    private static final int MAX_SHIFT = Integer.numberOfTrailingZeros(MAX_BLOCK);

    private final long idleLimitBytes;
    private final ConcurrentLinkedDeque<ByteBuffer>[] idle;
    private final AtomicLong idleBytes = new AtomicLong();
    private final AtomicLong heldBytes = new AtomicLong();
    private final AtomicLong freshBlocks = new AtomicLong();

    public PooledDirectMemory() {
        this(DEFAULT_IDLE_LIMIT_BYTES);
    }

    @SuppressWarnings("unchecked")
    PooledDirectMemory(long idleLimitBytes) {
        this.idleLimitBytes = idleLimitBytes;
        this.idle = new ConcurrentLinkedDeque[MAX_SHIFT - MIN_SHIFT + 1];
        for (int i = 0; i < idle.length; i++) {
            idle[i] = new ConcurrentLinkedDeque<>();
        }
    }

    @Override
    public ReadBuffer allocate(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be >= 0, was " + capacity);
        }
        int sizeClass = sizeClass(capacity);
        ByteBuffer block = sizeClass < 0 ? null : idle[sizeClass].pollFirst();
        if (block != null) {
            idleBytes.addAndGet(-block.capacity());
        } else {
            block = ByteBuffer.allocateDirect(sizeClass < 0 ? capacity : MIN_BLOCK << sizeClass);
            freshBlocks.incrementAndGet();
        }
        heldBytes.addAndGet(capacity);
        ByteBuffer taken = block;
        return new ReadBuffer(taken.slice(0, capacity), () -> {
            heldBytes.addAndGet(-capacity);
            giveBack(taken, sizeClass);
        });
    }

    private void giveBack(ByteBuffer block, int sizeClass) {
        if (sizeClass >= 0) {
            if (idleBytes.addAndGet(block.capacity()) <= idleLimitBytes) {
                idle[sizeClass].offerFirst(block);
                return;
            }
            idleBytes.addAndGet(-block.capacity());
        }
        PlatformDependent.freeDirectBuffer(block);
    }

    /** Index of the smallest block size holding {@code capacity} bytes, or -1 above the largest. */
    private static int sizeClass(int capacity) {
        if (capacity > MAX_BLOCK) {
            return -1;
        }
        int shift = capacity <= MIN_BLOCK ? MIN_SHIFT : 32 - Integer.numberOfLeadingZeros(capacity - 1);
        return shift - MIN_SHIFT;
    }

    /**
     * Bytes handed out and not given back: reads whose responses are still being written, produce bodies not yet
     * appended. It returns to zero when the service is idle; a value that only grows is a leak
     * ({@code tierlog_direct_memory_bytes}).
     */
    public long heldBytes() {
        return heldBytes.get();
    }

    /** Bytes in blocks kept for reuse; at most the idle limit. */
    long idleBytes() {
        return idleBytes.get();
    }

    /** Blocks allocated (and zeroed by the JDK) rather than reused, since start; for tests. */
    long freshBlocks() {
        return freshBlocks.get();
    }
}
