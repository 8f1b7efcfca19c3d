package io.tierlog.service.groups;

/** A group's committed offset for one partition: the next offset the group will read (Kafka's meaning). */
public record CommittedOffset(String topic, int partition, long offset) {
}
