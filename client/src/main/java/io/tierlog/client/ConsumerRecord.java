package io.tierlog.client;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/** One record read from a partition. {@code key}, {@code value} and header values may be null. */
public record ConsumerRecord(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value,
                             Map<String, byte[]> headers) {
    public String keyAsString() {
        return key == null ? null : new String(key, StandardCharsets.UTF_8);
    }

    public String valueAsString() {
        return value == null ? null : new String(value, StandardCharsets.UTF_8);
    }

    public TopicPartition topicPartition() {
        return new TopicPartition(topic, partition);
    }
}
