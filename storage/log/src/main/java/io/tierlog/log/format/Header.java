package io.tierlog.log.format;

import java.nio.charset.StandardCharsets;

/** A record header: a UTF-8 name and a byte value (null allowed, as in Kafka). */
public record Header(String name, byte[] value) {
    public Header {
        if (name == null) {
            throw new IllegalArgumentException("header name must not be null");
        }
    }

    int sizeInBytes() {
        return name.getBytes(StandardCharsets.UTF_8).length + (value == null ? 0 : value.length);
    }
}
