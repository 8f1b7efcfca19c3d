package io.tierlog.ingest;

/** Where one produced record landed. */
public record PartitionOffset(int partition, long offset) {
}
