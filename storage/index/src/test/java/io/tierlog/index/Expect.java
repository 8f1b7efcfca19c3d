package io.tierlog.index;

import io.tierlog.log.Position;
import io.tierlog.log.format.BatchInfo;

import java.util.List;
import java.util.Optional;

/** Brute-force answers over lists, to check the index against. */
final class Expect {
    private Expect() {
    }

    /** The greatest entry with offset {@code <= offset}. */
    static Optional<Position> floor(List<Position> entries, long offset) {
        int lo = 0;
        int hi = entries.size() - 1;
        Position best = null;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (entries.get(mid).offset() <= offset) {
                best = entries.get(mid);
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return Optional.ofNullable(best);
    }

    /** The batch holding {@code offset}. */
    static BatchInfo batchOf(List<BatchInfo> batches, long offset) {
        int lo = 0;
        int hi = batches.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            BatchInfo b = batches.get(mid);
            if (b.lastOffset() < offset) {
                lo = mid + 1;
            } else if (b.baseOffset() > offset) {
                hi = mid - 1;
            } else {
                return b;
            }
        }
        throw new AssertionError("no batch holds offset " + offset);
    }

    static Position endOf(List<BatchInfo> batches) {
        BatchInfo last = batches.get(batches.size() - 1);
        return new Position(last.nextOffset(), last.segmentBase(), last.endPosition());
    }
}
