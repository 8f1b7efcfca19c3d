package io.tierlog.tiering;

/**
 * Where a partition's tiers lie, for {@code partitionStates} and for routing reads.
 *
 * @param logStartOffset the first readable offset of the whole log
 * @param coldEnd        the offset after the last cold record ({@code logStartOffset} if no cold data)
 * @param coldBytes      bytes of the committed cold segments
 * @param coldSegments   number of committed cold segments
 */
public record PartitionTiers(long logStartOffset, long coldEnd, long coldBytes, int coldSegments) {
}
