package io.tierlog.ingest;

import io.tierlog.log.format.Header;

import java.util.List;

/**
 * One record of a produce request, decoded to bytes. {@code partition} and {@code timestamp} are null when the
 * client left them out (the service then partitions and stamps it).
 */
public record ProduceRecord(byte[] key, byte[] value, List<Header> headers, Integer partition, Long timestamp) {
    public ProduceRecord {
        headers = List.copyOf(headers);
    }
}
