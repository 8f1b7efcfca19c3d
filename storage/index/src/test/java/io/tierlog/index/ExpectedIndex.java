package io.tierlog.index;

import io.tierlog.log.Position;
import io.tierlog.log.format.BatchInfo;

import java.util.ArrayList;
import java.util.List;

/** The offset index's documented rule, computed by brute force to check {@link HotIndexer} against. */
final class ExpectedIndex {
    private ExpectedIndex() {
    }

    /** The entries the rule produces for {@code batches}: each segment's first batch, then one per interval. */
    static List<Position> entries(List<BatchInfo> batches, int intervalBytes) {
        List<Position> entries = new ArrayList<>();
        long bytesSince = 0;
        for (BatchInfo b : batches) {
            if (b.position() == 0 || bytesSince >= intervalBytes) {
                entries.add(new Position(b.baseOffset(), b.segmentBase(), b.position()));
                bytesSince = 0;
            }
            bytesSince += b.sizeInBytes();
        }
        return entries;
    }
}
