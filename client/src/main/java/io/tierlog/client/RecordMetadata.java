package io.tierlog.client;

/** Where a sent record was appended. {@code duplicate}: the service had it already from an earlier attempt. */
public record RecordMetadata(String topic, int partition, long offset, boolean duplicate) {
}
