package io.tierlog.log.format;

import java.util.List;

/**
 * One record to append: key and value bytes (either may be null; a null value is a tombstone), headers in
 * order, and the producer's timestamp in epoch milliseconds.
 */
public record AppendRecord(byte[] key, byte[] value, List<Header> headers, long timestamp) {
    public AppendRecord {
        headers = List.copyOf(headers);
    }

    /** The record's payload size as max.message.bytes counts it: key, value and header names and values. */
    public int payloadBytes() {
        int size = (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
        for (Header h : headers) {
            size += h.sizeInBytes();
        }
        return size;
    }
}
