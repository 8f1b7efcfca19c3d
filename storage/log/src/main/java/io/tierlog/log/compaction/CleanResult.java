package io.tierlog.log.compaction;

/**
 * What one {@link HotCleaner} pass over a partition did.
 *
 * @param ran             whether the pass cleaned (false: nothing to clean, or below {@code min.cleanable.dirty.ratio})
 * @param dirtyRatio      not-yet-cleaned bytes over all bytes of the cleanable range, before the pass
 * @param cleanableBytes  bytes of the cleanable range before the pass
 * @param bytesRead       bytes of segments read to clean them (0 when the pass did not run)
 * @param bytesAfter      bytes of the cleanable range after the pass
 * @param segmentsRewritten segments swapped for a compacted copy
 * @param nanos           the pass's duration
 * @param cleanedEnd      where the clean part ends after the pass: the pass cleaned the range up to here (less than
 *                        the range's end when the key map's budget ran out first); 0 when it did not run
 */
public record CleanResult(boolean ran, double dirtyRatio, long cleanableBytes, long bytesRead, long bytesAfter,
                          int segmentsRewritten, long nanos, long cleanedEnd) {

    static CleanResult skipped(double dirtyRatio, long cleanableBytes) {
        return new CleanResult(false, dirtyRatio, cleanableBytes, 0, cleanableBytes, 0, 0, 0);
    }
}
