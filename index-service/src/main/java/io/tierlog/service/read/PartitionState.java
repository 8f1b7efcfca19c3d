package io.tierlog.service.read;

/**
 * One partition's extent across tiers, as {@code GET /v1/topics/{topic}} reports it. {@code logStartOffset} is
 * the first readable offset in any tier, {@code hotStartOffset} the first in the hot tier.
 */
public record PartitionState(int partition, long logStartOffset, long hotStartOffset, long highWatermark,
                             long hotBytes, long coldBytes, int hotSegments, int coldSegments) {
}
