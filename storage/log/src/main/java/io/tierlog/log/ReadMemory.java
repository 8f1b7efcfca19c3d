package io.tierlog.log;

/**
 * Where batch reads put the bytes they return. The default is the Java heap; a server passes memory it can hand to
 * its network layer as is (the index-service uses Netty's pooled direct buffers), so the hot read path reads file
 * bytes straight into the response: no copy between the file and the socket beyond the kernel's own.
 */
@FunctionalInterface
public interface ReadMemory {
    /** Heap buffers, released by the garbage collector. */
    ReadMemory HEAP = ReadBuffer::heap;

    /** A buffer of exactly {@code capacity} bytes (position 0, limit {@code capacity}); its contents are undefined. */
    ReadBuffer allocate(int capacity);
}
