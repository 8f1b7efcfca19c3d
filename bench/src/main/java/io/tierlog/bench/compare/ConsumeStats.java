package io.tierlog.bench.compare;

/** What one consume run read: records and value bytes from offset 0 to the end, and how long it took. */
public record ConsumeStats(long records, long valueBytes, long elapsedNanos) {
    public double recordsPerSecond() {
        return records / (elapsedNanos / 1e9);
    }

    public double megabytesPerSecond() {
        return valueBytes / 1e6 / (elapsedNanos / 1e9);
    }
}
