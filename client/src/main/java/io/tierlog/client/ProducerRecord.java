package io.tierlog.client;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One record to send. {@code partition} null: chosen by key (Kafka's partitioner), or for an unkeyed record a
 * partition the producer sticks to for a batch. {@code timestamp} null: the time of {@code send}. {@code value}
 * null is a tombstone. Header values may be null; the map's order is kept.
 */
public record ProducerRecord(String topic, Integer partition, byte[] key, byte[] value, Map<String, byte[]> headers,
                             Long timestamp) {
    public ProducerRecord {
        Objects.requireNonNull(topic, "topic");
        headers = headers == null || headers.isEmpty() ? Map.of() : new LinkedHashMap<>(headers);
        if (!headers.isEmpty()) {
            for (String name : headers.keySet()) {
                Objects.requireNonNull(name, "header name"); // written into the batch at send, where it could not fail
            }
        }
    }

    public static ProducerRecord of(String topic, byte[] key, byte[] value) {
        return new ProducerRecord(topic, null, key, value, null, null);
    }

    /** UTF-8 key (may be null) and value. */
    public static ProducerRecord of(String topic, String key, String value) {
        return of(topic, key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    /** Key, value and headers' bytes: the measure the producer's buffer and batch sizes count. */
    int sizeInBytes() {
        int n = 16 + (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
        for (Map.Entry<String, byte[]> h : headers.entrySet()) {
            n += h.getKey().length() * 3 + (h.getValue() == null ? 0 : h.getValue().length) + 4;
        }
        return n;
    }
}
