package io.tierlog.bench.cold;

import java.util.Map;

/**
 * One measured read of the cold range: wall time from the request (or first GET) to the last byte, time to the
 * first record (or the first completed GET), what was read, and the S3 requests it caused.
 *
 * @param records    records read (0 for the raw readers, which do not decode)
 * @param valueBytes value bytes of those records (JSON text, quotes included)
 * @param objectBytes segment object bytes the read covered (the same cold range for every reader)
 * @param s3          S3 requests counted at S3Proxy during the read (null until added)
 * @param service     the index-service's cold-read counters over the read; null for the raw readers
 * @param cpu         CPU used during the read (null until added)
 */
record Replay(long nanos, long firstNanos, long records, long valueBytes, long objectBytes, CountingS3.Counts s3,
              Map<String, Double> service, Cpu cpu) {

    /**
     * CPU seconds used during a read by the index-service process and by the benchmark's own JVM, which holds
     * S3Proxy, the latency proxy and the reader. On a machine with few cores they share, this says what a
     * reader costs beside what it achieves: a raw reader's CPU is almost all S3Proxy's.
     */
    record Cpu(double serviceSeconds, double benchmarkSeconds) {
    }

    Replay(long nanos, long firstNanos, long records, long valueBytes, long objectBytes) {
        this(nanos, firstNanos, records, valueBytes, objectBytes, null, null, null);
    }

    Replay withCounts(CountingS3.Counts counts) {
        return new Replay(nanos, firstNanos, records, valueBytes, objectBytes, counts, service, cpu);
    }

    /** With the service's own cold-read counters over this replay ({@link ServiceMetrics}). */
    Replay withService(Map<String, Double> metrics) {
        return new Replay(nanos, firstNanos, records, valueBytes, objectBytes, s3, metrics, cpu);
    }

    Replay withCpu(Cpu used) {
        return new Replay(nanos, firstNanos, records, valueBytes, objectBytes, s3, service, used);
    }

    /** CPU seconds per GiB of segment objects: service, benchmark JVM; null when not measured. */
    double[] cpuSecondsPerGib() {
        if (cpu == null) {
            return null;
        }
        double gib = objectBytes / (double) (1L << 30);
        return new double[] {cpu.serviceSeconds() / gib, cpu.benchmarkSeconds() / gib};
    }

    /** MB/s (10^6 B/s) of record values; 0 for the raw readers. */
    double valueMbps() {
        return valueBytes / 1e6 / (nanos / 1e9);
    }

    /** MB/s (10^6 B/s) of segment object bytes: the same numerator for every reader, so ratios compare times. */
    double objectMbps() {
        return objectBytes / 1e6 / (nanos / 1e9);
    }

    double firstMillis() {
        return firstNanos / 1e6;
    }
}
