package io.tierlog.client;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * A record leased from a share group: {@code lease} identifies this delivery (acknowledge with it);
 * {@code deliveryCount} is 1 on the first delivery and grows with each redelivery.
 */
public record SharedRecord(String lease, String topic, int partition, long offset, int deliveryCount, long timestamp,
                           byte[] key, byte[] value, Map<String, byte[]> headers) {
    public String keyAsString() {
        return key == null ? null : new String(key, StandardCharsets.UTF_8);
    }

    public String valueAsString() {
        return value == null ? null : new String(value, StandardCharsets.UTF_8);
    }
}
