package io.tierlog.service;

import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Heap byte arrays for JSON produce bodies, kept for reuse. A JSON body is parsed where it lies (Jackson reads a
 * byte array, and values are copied verbatim from it into the record batches), so it is read into heap memory; a
 * fresh array per request of about 1 MB would be zeroed by the JVM and, on G1 with regions of 1 MB, allocated as a
 * humongous object each time.
 *
 * <p>Arrays come in sizes from {@value #MIN_ARRAY} bytes to {@value #MAX_ARRAY} bytes, four to a doubling (1, 1.25, 1.5
 * and 1.75 times a power of two), so an array is usually longer than the body it holds (by under a quarter): its
 * holder carries the length. With power-of-two sizes the benchmark's bodies of about 1.05 MB each took a 2 MB array,
 * so the idle limit kept half as many bodies as it could, and 40 bodies in flight missed the pool and allocated
 * (humongous) arrays. A given-back array goes on its size's free
 * list (last in, first out) while the idle arrays total at most the idle limit; others, and requests above the
 * largest size, are left to the garbage collector. An array is not cleared between uses: readers must not look past
 * the length they were given. Thread-safe.
 */
public final class PooledArrays {
    static final int MIN_ARRAY = 4096;
    static final int MAX_ARRAY = 8 << 20;
    /** Idle arrays kept by default: a few concurrent 1 MB produce bodies. */
    public static final long DEFAULT_IDLE_LIMIT_BYTES = 32L << 20;

    /** The array sizes, ascending: four per doubling from MIN_ARRAY, then MAX_ARRAY. */
    private static final int[] SIZES = sizes();

    private final long idleLimitBytes;
    private final ConcurrentLinkedDeque<byte[]>[] idle;
    private final AtomicLong idleBytes = new AtomicLong();
    private final AtomicLong freshArrays = new AtomicLong();

    public PooledArrays() {
        this(DEFAULT_IDLE_LIMIT_BYTES);
    }

    @SuppressWarnings("unchecked")
    PooledArrays(long idleLimitBytes) {
        this.idleLimitBytes = idleLimitBytes;
        this.idle = new ConcurrentLinkedDeque[SIZES.length];
        for (int i = 0; i < idle.length; i++) {
            idle[i] = new ConcurrentLinkedDeque<>();
        }
    }

    /** An array of at least {@code length} bytes, with stale contents; give it back with {@link #giveBack}. */
    public byte[] take(int length) {
        if (length < 0) {
            throw new IllegalArgumentException("length must be >= 0, was " + length);
        }
        int sizeClass = sizeClass(length);
        byte[] array = sizeClass < 0 ? null : idle[sizeClass].pollFirst();
        if (array != null) {
            idleBytes.addAndGet(-array.length);
            return array;
        }
        freshArrays.incrementAndGet();
        return new byte[sizeClass < 0 ? length : SIZES[sizeClass]];
    }

    /** Gives back an array {@link #take} answered; it must not be used afterwards. */
    public void giveBack(byte[] array) {
        int sizeClass = sizeClass(array.length);
        if (sizeClass < 0 || SIZES[sizeClass] != array.length) {
            return;   // not one of the pool's sizes: the garbage collector's
        }
        if (idleBytes.addAndGet(array.length) <= idleLimitBytes) {
            idle[sizeClass].offerFirst(array);
        } else {
            idleBytes.addAndGet(-array.length);
        }
    }

    /** Index of the smallest array size holding {@code length} bytes, or -1 above the largest. */
    private static int sizeClass(int length) {
        if (length > MAX_ARRAY) {
            return -1;
        }
        int at = Arrays.binarySearch(SIZES, length);
        return at >= 0 ? at : -at - 1;
    }

    private static int[] sizes() {
        int doublings = Integer.numberOfTrailingZeros(MAX_ARRAY) - Integer.numberOfTrailingZeros(MIN_ARRAY);
        int[] sizes = new int[doublings * 4 + 1];
        for (int d = 0; d < doublings; d++) {
            int base = MIN_ARRAY << d;
            for (int q = 0; q < 4; q++) {
                sizes[d * 4 + q] = base + q * (base / 4);
            }
        }
        sizes[sizes.length - 1] = MAX_ARRAY;
        return sizes;
    }

    /** Bytes in arrays kept for reuse; at most the idle limit (zero or more once every body is given back). */
    public long idleBytes() {
        return idleBytes.get();
    }

    /** Arrays allocated rather than reused, since start; for tests. */
    long freshArrays() {
        return freshArrays.get();
    }
}
