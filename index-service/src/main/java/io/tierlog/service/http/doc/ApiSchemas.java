package io.tierlog.service.http.doc;

import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.List;
import java.util.Map;

/**
 * The JSON bodies of the HTTP API, as OpenAPI schemas. The resources read and write JSON trees (they check fields
 * by hand to name the offending one in a 400), so these records exist only to describe those bodies in
 * {@code /q/openapi}; nothing serializes them. Field names and meanings are docs/api.md's. The problem+json
 * answers are described once, in {@code META-INF/openapi.yaml} ({@link ProblemResponses}).
 */
public final class ApiSchemas {
    private ApiSchemas() {
    }

    @Schema(name = "TopicConfig", description = "Kafka's topic config keys; -1 = unlimited. local.retention.* = -2 "
            + "(the default) means the same as retention.* and is shown as -2.")
    public record TopicConfig(
            @Schema(name = "retention.ms", description = "Whole log, hot + cold; default 604800000 (7 days)")
            Long retentionMs,
            @Schema(name = "retention.bytes", description = "Whole log, per partition; default -1") Long retentionBytes,
            @Schema(name = "local.retention.ms", description = "Hot tier; default -2 (same as retention.ms)")
            Long localRetentionMs,
            @Schema(name = "local.retention.bytes", description = "Hot tier; default -2 (same as retention.bytes)")
            Long localRetentionBytes,
            @Schema(name = "segment.bytes", description = "Default 134217728 (128 MiB)") Long segmentBytes,
            @Schema(name = "segment.ms", description = "Default 3600000 (1 hour)") Long segmentMs,
            @Schema(name = "max.message.bytes", description = "Largest record; default 1048588") Long maxMessageBytes,
            @Schema(name = "cleanup.policy", enumeration = {"delete", "compact", "compact,delete"},
                    description = "delete (default): retention removes old segments; compact: keep the last record "
                            + "of each key; compact,delete: both") String cleanupPolicy,
            @Schema(name = "delete.retention.ms", description = "How long compaction keeps a tombstone; default "
                    + "86400000 (1 day)") Long deleteRetentionMs,
            @Schema(name = "min.compaction.lag.ms", description = "Records younger than this are not compacted; "
                    + "default 0") Long minCompactionLagMs,
            @Schema(name = "min.cleanable.dirty.ratio", description = "Share of not yet compacted bytes that starts "
                    + "a pass, 0..1; default 0.5") Double minCleanableDirtyRatio,
            @Schema(name = "message.timestamp.type", enumeration = {"CreateTime", "LogAppendTime"},
                    description = "CreateTime (default): records keep the producer's timestamps; LogAppendTime: "
                            + "every record reads as the time its batch was appended") String messageTimestampType) {
    }

    @Schema(name = "TopicCreate")
    public record TopicCreate(@Schema(required = true, pattern = "[A-Za-z0-9._-]{1,249}") String name,
                              @Schema(required = true, minimum = "1", maximum = "1024") int partitions,
                              TopicConfig config) {
    }

    @Schema(name = "TopicSummary")
    public record TopicSummary(String name, int partitions) {
    }

    @Schema(name = "TopicList")
    public record TopicList(List<TopicSummary> topics) {
    }

    @Schema(name = "SegmentCounts")
    public record SegmentCounts(int hot, int cold) {
    }

    @Schema(name = "PartitionState")
    public record PartitionState(int partition, long logStartOffset, long hotStartOffset, long highWatermark,
                                 long hotBytes, long coldBytes, SegmentCounts segments) {
    }

    @Schema(name = "Topic")
    public record Topic(String name, int partitions, TopicConfig config, List<PartitionState> partitionStates) {
    }

    @Schema(name = "Producer", description = "Idempotent producer: the append happens once per (id, partition, "
            + "sequence); a retry answers the original offsets with duplicate = true.")
    public record Producer(@Schema(required = true) String id, @Schema(required = true) int epoch,
                           @Schema(required = true) int sequence) {
    }

    @Schema(name = "ProduceRecord")
    public record ProduceRecord(String key,
                                @Schema(required = true, description = "Any JSON value (a base64 string with "
                                        + "encoding base64); null is a tombstone") Object value,
                                Map<String, String> headers, Integer partition,
                                @Schema(description = "Epoch ms; default: now") Long timestamp) {
    }

    @Schema(name = "ProduceRequest")
    public record ProduceRequest(@Schema(required = true) List<ProduceRecord> records,
                                 @Schema(enumeration = {"json", "base64"}, defaultValue = "json") String encoding,
                                 Producer producer) {
    }

    @Schema(name = "PartitionOffset")
    public record PartitionOffset(int partition, long offset) {
    }

    @Schema(name = "ProduceResponse", description = "One offset per record, in request order.")
    public record ProduceResponse(List<PartitionOffset> offsets, boolean duplicate) {
    }

    @Schema(name = "Record")
    public record Record(long offset, long timestamp, String key, Object value, Map<String, String> headers,
                         @Schema(enumeration = "base64", description = "Present when key is base64") String keyEncoding,
                         @Schema(enumeration = "base64", description = "Present when value is base64")
                         String valueEncoding) {
    }

    @Schema(name = "KeyRecord", description = "A key's latest record, as in fetch, with its topic and partition")
    public record KeyRecord(String topic, int partition, long offset, long timestamp, String key, Object value,
                            Map<String, String> headers,
                            @Schema(enumeration = "base64", description = "Present when key is base64") String keyEncoding,
                            @Schema(enumeration = "base64", description = "Present when value is base64")
                            String valueEncoding) {
    }

    @Schema(name = "FetchResponse")
    public record FetchResponse(String topic, int partition, List<Record> records, long nextOffset, long highWatermark,
                                @Schema(description = "With isolation=read_committed only: where the fetch ends "
                                        + "while a transaction is open (the high watermark when none is)")
                                Long lastStableOffset,
                                long logStartOffset) {
    }

    @Schema(name = "RecordBatches", type = SchemaType.STRING, format = "binary",
            description = "Kafka RecordBatch v2 batches back to back (application/vnd.tierlog.record-batches)")
    public record RecordBatches() {
    }

    @Schema(name = "OffsetLookup", description = "For ?timestamp=T: the first record at or after T and its own "
            + "timestamp (offset = highWatermark, timestamp = -1 when none). For ?at=: offset only.")
    public record OffsetLookup(@Schema(required = true) long offset, Long timestamp) {
    }

    @Schema(name = "CommittedOffset", description = "offset = the next offset the group will read")
    public record CommittedOffset(@Schema(required = true) String topic, @Schema(required = true) int partition,
                                  @Schema(required = true) long offset) {
    }

    @Schema(name = "OffsetCommit")
    public record OffsetCommit(@Schema(required = true) List<CommittedOffset> offsets) {
    }

    @Schema(name = "GroupOffsets")
    public record GroupOffsets(String group, List<CommittedOffset> offsets) {
    }

    @Schema(name = "PartitionLag")
    public record PartitionLag(String topic, int partition, long committedOffset, long highWatermark, long lag,
                               @Schema(description = "now - the timestamp of the first unconsumed record; 0 when "
                                       + "caught up") long lagMs) {
    }

    @Schema(name = "GroupLag")
    public record GroupLag(String group, long totalLag, List<PartitionLag> partitions) {
    }

    @Schema(name = "GroupSummary")
    public record GroupSummary(String group, long totalLag) {
    }

    @Schema(name = "GroupList")
    public record GroupList(List<GroupSummary> groups) {
    }

    // Identity and access

    @Schema(name = "TokenMint")
    public record TokenMint(@Schema(required = true, description = "1..200 characters") String name,
                            @Schema(required = true, description = "Space-separated scopes, e.g. "
                                    + "\"produce:topic:orders* fetch:topic:orders*\"") String scopes,
                            @Schema(description = "Epoch ms, in the future; none = never expires") Long expiresAt) {
    }

    @Schema(name = "TokenInfo", description = "A minted token without its secret")
    public record TokenInfo(String id, String name, String scopes, Long expiresAt) {
    }

    @Schema(name = "MintedToken", description = "The secret token is in this answer and nowhere else")
    public record MintedToken(String id, String name, String scopes, Long expiresAt, String token) {
    }

    @Schema(name = "TokenList", description = "Revoked tokens left out, secrets never shown")
    public record TokenList(List<TokenInfo> tokens) {
    }

    // Consumer groups that share work

    @Schema(name = "TopicPartitions")
    public record TopicPartitions(@Schema(required = true) String topic, @Schema(required = true) List<Integer> partitions) {
    }

    @Schema(name = "Heartbeat", description = "memberEpoch 0 (with memberId null) joins, N stays, -1 leaves")
    public record Heartbeat(String memberId, @Schema(required = true) int memberEpoch, List<String> topics,
                            Long sessionTimeoutMs, List<TopicPartitions> ownedPartitions, String clientId) {
    }

    @Schema(name = "HeartbeatAnswer", description = "The member's full current assignment; heartbeatIntervalMs is "
            + "absent after a leave")
    public record HeartbeatAnswer(String memberId, int memberEpoch, Long heartbeatIntervalMs,
                                  List<TopicPartitions> assignment) {
    }

    @Schema(name = "GroupMember")
    public record GroupMember(String memberId, String clientId, int memberEpoch, List<TopicPartitions> assignment,
                              long lastHeartbeatMs) {
    }

    @Schema(name = "GroupDescription")
    public record GroupDescription(String group,
                                   @Schema(enumeration = {"empty", "stable", "reconciling"}) String state,
                                   long groupEpoch, List<GroupMember> members) {
    }

    @Schema(name = "OffsetReset")
    public record OffsetReset(@Schema(required = true) List<String> topics,
                              @Schema(required = true, enumeration = {"earliest", "latest", "timestamp"}) String to,
                              @Schema(description = "Epoch ms; only with to = timestamp") Long timestamp) {
    }

    // Share groups

    @Schema(name = "ShareLease", description = "All optional")
    public record ShareLease(@Schema(defaultValue = "100") Integer maxRecords,
                             @Schema(defaultValue = "30000", maximum = "3600000") Long leaseMs,
                             @Schema(defaultValue = "0", maximum = "30000") Long waitMs) {
    }

    @Schema(name = "LeasedRecord", description = "A fetched record (as in fetch) with its lease")
    public record LeasedRecord(String lease, int partition, long offset, int deliveryCount, long timestamp, String key,
                               Object value, Map<String, String> headers) {
    }

    @Schema(name = "LeasedRange", description = "A run of consecutive leased records of one partition with one "
            + "delivery count, named by one range lease (ADR 0042)")
    public record LeasedRange(String lease, int partition, long firstOffset, long lastOffset, int deliveryCount) {
    }

    @Schema(name = "LeasedRecords")
    public record LeasedRecords(List<LeasedRecord> records,
                                @Schema(description = "The same records as runs under range leases") List<LeasedRange> ranges) {
    }

    @Schema(name = "ShareAck")
    public record ShareAck(@Schema(required = true, description = "A record's lease or a range lease") String lease,
                           @Schema(required = true, enumeration = {"accept", "release", "reject", "renew"}) String type,
                           @Schema(description = "Narrows a range lease: first offset acknowledged (within the run)") Long firstOffset,
                           @Schema(description = "Narrows a range lease: last offset acknowledged (within the run)") Long lastOffset) {
    }

    @Schema(name = "ShareAcks")
    public record ShareAcks(@Schema(required = true) List<ShareAck> acks) {
    }

    @Schema(name = "ShareAckResult")
    public record ShareAckResult(String lease, boolean ok,
                                 @Schema(description = "Present when ok is false, e.g. lease-expired") String error,
                                 @Schema(description = "Echoed when the ack had it") Long firstOffset,
                                 @Schema(description = "Echoed when the ack had it") Long lastOffset) {
    }

    @Schema(name = "ShareAckResults", description = "One result per ack, in request order")
    public record ShareAckResults(List<ShareAckResult> results) {
    }

    @Schema(name = "ShareGroupConfig", description = "Keys left out take these defaults")
    public record ShareGroupConfig(@Schema(enumeration = {"earliest", "latest"}, defaultValue = "latest") String start,
                                   @Schema(name = "max.delivery.attempts", defaultValue = "5") Integer maxDeliveryAttempts,
                                   @Schema(name = "redelivery.delay.ms", defaultValue = "0") Long redeliveryDelayMs,
                                   @Schema(name = "dead.letter.topic") String deadLetterTopic,
                                   @Schema(enumeration = {"read_uncommitted", "read_committed"},
                                           defaultValue = "read_uncommitted") String isolation,
                                   @Schema(name = "lease.ms", minimum = "1000", maximum = "3600000",
                                           description = "A lease call's lease when it names none (else 30000), "
                                                   + "and the Kafka share consumers' acquisition lock")
                                   Long leaseMs) {
    }

    @Schema(name = "ShareGroupConfigAnswer")
    public record ShareGroupConfigAnswer(String group, ShareGroupConfig config) {
    }

    @Schema(name = "SharePartition")
    public record SharePartition(int partition, long startOffset, long available, long leased, long lag) {
    }

    @Schema(name = "ShareTopic")
    public record ShareTopic(String topic, List<SharePartition> partitions) {
    }

    @Schema(name = "ShareGroupDescription")
    public record ShareGroupDescription(String group, ShareGroupConfig config, List<ShareTopic> topics) {
    }
}
