package io.tierlog.service.api.doc;

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
            @Schema(name = "max.message.bytes", description = "Largest record; default 1048588") Long maxMessageBytes) {
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

    @Schema(name = "FetchResponse")
    public record FetchResponse(String topic, int partition, List<Record> records, long nextOffset, long highWatermark,
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
    public record PartitionLag(String topic, int partition, long committedOffset, long highWatermark, long lag) {
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
}
