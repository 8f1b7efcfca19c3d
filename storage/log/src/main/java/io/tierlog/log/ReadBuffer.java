package io.tierlog.log;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One buffer of {@link ReadMemory} and how to give it back. Whoever holds it last closes it, once the bytes are no
 * longer needed (for a response: once the network layer has written them). Closing more than once is harmless.
 */
public final class ReadBuffer implements AutoCloseable {
    private final ByteBuffer memory;
    private final Runnable release;
    private final AtomicBoolean released = new AtomicBoolean();

    /**
     * @param memory  the buffer's whole capacity, position 0
     * @param release gives the memory back; runs once, on the first {@link #close}
     */
    public ReadBuffer(ByteBuffer memory, Runnable release) {
        this.memory = memory;
        this.release = release;
    }

    public static ReadBuffer heap(int capacity) {
        return new ReadBuffer(ByteBuffer.allocate(capacity), () -> { });
    }

    /** The whole buffer, for absolute reads and writes; do not use after {@link #close}. */
    public ByteBuffer memory() {
        return memory;
    }

    public int capacity() {
        return memory.capacity();
    }

    @Override
    public void close() {
        if (released.compareAndSet(false, true)) {
            release.run();
        }
    }
}
