package io.tierlog.bench.compare;

import org.HdrHistogram.Histogram;

/**
 * What one produce run measured. Latency is per record in microseconds, from the moment the application handed
 * the record to its client (or, when paced, the record's scheduled send time) to its acknowledgement.
 */
public record ProduceStats(long records, long valueBytes, long elapsedNanos, Histogram latencyMicros) {

    public double recordsPerSecond() {
        return records / seconds();
    }

    /** Value payload throughput in MB/s (10^6 bytes), counting value bytes only, the same on both systems. */
    public double megabytesPerSecond() {
        return valueBytes / 1e6 / seconds();
    }

    public double p50Millis() {
        return latencyMicros.getValueAtPercentile(50) / 1000.0;
    }

    public double p99Millis() {
        return latencyMicros.getValueAtPercentile(99) / 1000.0;
    }

    public double seconds() {
        return elapsedNanos / 1e9;
    }
}
