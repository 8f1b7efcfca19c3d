package io.tierlog.service.groups;

/**
 * A group's committed offset for one partition: the next offset the group will read (Kafka's meaning).
 *
 * @param metadata what a Kafka client committed with the offset (OffsetCommit's and TxnOffsetCommit's
 *                 {@code committedMetadata}: Kafka Streams keeps a partition's stream time there), at most
 *                 {@link GroupOffsets#MAX_METADATA_CHARS}; null or empty: none (HTTP commits carry none)
 */
public record CommittedOffset(String topic, int partition, long offset, String metadata) {
    /** An offset committed without metadata. */
    public CommittedOffset(String topic, int partition, long offset) {
        this(topic, partition, offset, null);
    }
}
