package io.tierlog.log.format;

import java.util.List;

/** A record read back from the log, with the offset the log assigned it. */
public record LogRecord(long offset, long timestamp, byte[] key, byte[] value, List<Header> headers) {
    /** Bytes this record contributes to a fetch's {@code maxBytes} budget. */
    public int sizeInBytes() {
        int size = 16 + (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
        for (Header h : headers) {
            size += h.sizeInBytes();
        }
        return size;
    }
}
