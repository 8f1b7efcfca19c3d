package io.tierlog.log;

import io.tierlog.log.format.BatchInfo;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where each batch of a partition's newest segment begins, in memory, as the indexer found them (every batch, each
 * CRC-checked on the way or recorded by this process's writer): Kafka's offset index for the active segment, dense.
 * {@link PartitionReader#sliceBatches} takes a fetch's range from it instead of reading one header per batch (a
 * syscall each: 64 for a 1 MiB fetch of 16 KiB batches), and checks the range's first and last batch in the file.
 *
 * <p>The batches are one contiguous run of one segment: a batch that does not continue the run (another segment, a
 * gap) starts a new run. At most {@value #MAX_BATCHES} are kept (8 bytes each), and the maps of one process share a
 * {@link Budget}: a map that cannot grow drops its older half, and one that has no room holds nothing (its fetches
 * walk the headers). Thread-safe: the indexer adds while fetches look up.
 */
public final class BatchPositions {
    /** 128 KiB per partition at most: 256 MiB of recent 16 KiB batches. */
    static final int MAX_BATCHES = 16_384;
    private static final int FIRST_CAPACITY = 256;

    private final Budget budget;
    /** Released: takes no more room (a catch-up may still be adding to it). */
    private boolean released;
    /** Added to or looked up since the last {@link #idleSinceLastLook}. */
    private boolean used;
    private long segmentBase = -1;
    /** Base offsets relative to {@link #segmentBase}, and byte positions, of {@link #count} batches. */
    private int[] offsets = new int[0];
    private int[] positions = new int[0];
    private int count;
    /** The offset and position after the last batch. */
    private long endOffset;
    private long endPosition;

    /** A map drawing its room from {@code budget}; {@link #release} gives it back. */
    public BatchPositions(Budget budget) {
        this.budget = budget;
    }

    /** Records a batch found in the log, in log order; one not continuing the run starts a new one. */
    public synchronized void add(BatchInfo info) {
        used = true;
        long relative = info.baseOffset() - info.segmentBase();
        if (info.nextOffset() - info.segmentBase() > Integer.MAX_VALUE || info.endPosition() > Integer.MAX_VALUE) {
            clear(); // beyond what 32-bit entries hold (Kafka's segments never are): fetches walk the headers
            return;
        }
        boolean continues = count > 0 && info.segmentBase() == segmentBase && info.baseOffset() == endOffset
                && info.position() == endPosition;
        if (!continues) {
            if (held(info)) {
                return; // walked again (a retried catch-up)
            }
            clear();
            segmentBase = info.segmentBase();
        }
        if (count == offsets.length && !grow()) {
            return;
        }
        offsets[count] = (int) relative;
        positions[count] = (int) info.position();
        count++;
        endOffset = info.nextOffset();
        endPosition = info.endPosition();
    }

    private boolean held(BatchInfo info) {
        if (count == 0 || info.segmentBase() != segmentBase || info.nextOffset() > endOffset) {
            return false;
        }
        int at = floor(info.baseOffset() - segmentBase);
        return at >= 0 && segmentBase + offsets[at] == info.baseOffset() && positions[at] == info.position();
    }

    /** Forgets every batch (the log was rewritten, or the index rebuilt). */
    public synchronized void clear() {
        segmentBase = -1;
        count = 0;
    }

    /** Whether this holds the batch of {@code offset} (a fetch from there needs no index hint). */
    public synchronized boolean holds(long offset) {
        return count > 0 && offset >= segmentBase + offsets[0] && offset < endOffset;
    }

    /**
     * Whether nothing was added or looked up since the last call (a second chance: a map idle over two looks, such as
     * that of a topic deleted through another process, can be released when the budget runs short).
     */
    public synchronized boolean idleSinceLastLook() {
        boolean idle = !used;
        used = false;
        return idle;
    }

    /** Gives this map's room back to its budget and forgets every batch (the partition's topic was deleted). */
    public synchronized void release() {
        budget.give(offsets.length);
        released = true;
        offsets = new int[0];
        positions = new int[0];
        clear();
    }

    /** Makes room for one more batch: a larger array if the budget allows, else the newer half; false if none. */
    private boolean grow() {
        if (offsets.length < MAX_BATCHES && !released) {
            int capacity = Math.max(FIRST_CAPACITY, Math.min(MAX_BATCHES, offsets.length * 2));
            if (budget.take(capacity - offsets.length)) {
                offsets = Arrays.copyOf(offsets, capacity);
                positions = Arrays.copyOf(positions, capacity);
                return true;
            }
        }
        if (count < 2) {
            clear();
            return false;
        }
        int kept = count / 2;
        System.arraycopy(offsets, count - kept, offsets, 0, kept);
        System.arraycopy(positions, count - kept, positions, 0, kept);
        count = kept;
        return true;
    }

    /**
     * The batches of {@code segment} from the one holding {@code fromOffset}, taken under {@link PartitionReader}'s
     * slicing rule (the first always; then while within {@code maxBytes} and short of {@code maxRecords}) and ending
     * at or before {@code limit}; null when this map does not hold every batch the rule reaches.
     */
    synchronized Span span(long segment, long fromOffset, int maxRecords, int maxBytes, long limit) {
        used = true;
        if (count == 0 || segment != segmentBase || fromOffset < segmentBase + offsets[0] || fromOffset >= endOffset) {
            return null;
        }
        int first = floor(fromOffset - segmentBase);
        long start = positions[first];
        long kept = 0;
        int records = 0;
        int last = first;
        for (int i = first; i < count; i++) {
            long end = i + 1 < count ? positions[i + 1] : endPosition;
            if (end > limit) {
                break;
            }
            long size = end - positions[i];
            if (kept > 0 && kept + size > maxBytes) {
                return span(first, last, start, kept, records, (int) (maxBytes - kept));
            }
            long next = nextOffset(i);
            kept += size;
            records += (int) (next - Math.max(segmentBase + offsets[i], fromOffset));
            last = i;
            if (records >= maxRecords || kept >= maxBytes) {
                return span(first, last, start, kept, records, 0);
            }
            if (i + 1 == count && end < limit) {
                return null; // the log goes on past what this map holds
            }
        }
        return kept == 0 ? null : span(first, last, start, kept, records, 0);
    }

    private Span span(int first, int last, long start, long kept, int records, int partialBatch) {
        return new Span(start, kept, nextOffset(last), records, segmentBase + offsets[first],
                sizeOf(first), segmentBase + offsets[last], positions[last], sizeOf(last), partialBatch);
    }

    private long nextOffset(int i) {
        return i + 1 < count ? segmentBase + offsets[i + 1] : endOffset;
    }

    private int sizeOf(int i) {
        return (int) ((i + 1 < count ? positions[i + 1] : endPosition) - positions[i]);
    }

    /** The index of the last batch whose base offset is at or below {@code relative}. */
    private int floor(long relative) {
        int at = Arrays.binarySearch(offsets, 0, count, (int) relative);
        return at >= 0 ? at : -at - 2;
    }

    /** Batches all the maps of one process may hold together (8 bytes each). Thread-safe. */
    public static final class Budget {
        private final AtomicLong left;
        private volatile boolean shortOfRoom;

        public Budget(long batches) {
            this.left = new AtomicLong(batches);
        }

        boolean take(long batches) {
            long now;
            do {
                now = left.get();
                if (now < batches) {
                    shortOfRoom = true;
                    return false;
                }
            } while (!left.compareAndSet(now, now - batches));
            return true;
        }

        void give(long batches) {
            left.addAndGet(batches);
        }

        /** Whether a map was refused room since the last call (its owner then releases idle maps). */
        public boolean wasShortOfRoom() {
            boolean was = shortOfRoom;
            shortOfRoom = false;
            return was;
        }

        /** Batches not yet taken by a map. */
        public long left() {
            return left.get();
        }
    }

    /**
     * A range of whole batches: where it begins, its length, the offset after it and the records at or above the
     * offset asked for; its first and last batch (base offset, position, size), which the reader finds in the
     * file before it trusts the range; and the bytes of the next batch that fit the byte limit when that batch
     * (below the limit position) did not ({@link BatchSlice#sentLength}).
     */
    record Span(long position, long length, long nextOffset, int records, long firstBase, int firstSize,
                long lastBase, long lastPosition, int lastSize, int partialBatch) {
    }
}
