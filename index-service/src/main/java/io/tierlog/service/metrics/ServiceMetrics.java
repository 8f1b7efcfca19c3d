package io.tierlog.service.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.tierlog.log.SyncMeters;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Produce and fetch meters (Prometheus names in brackets): request counters
 * ({@code tierlog_produce_requests_total}, {@code tierlog_fetch_requests_total}), record and byte counters
 * ({@code tierlog_produce_records_total}, {@code tierlog_produce_bytes_total}, {@code tierlog_fetch_records_total},
 * {@code tierlog_fetch_bytes_total}) and latency timers with histogram buckets
 * ({@code tierlog_produce_latency_seconds}, {@code tierlog_fetch_latency_seconds}). Rates are Prometheus'
 * {@code rate()} over the counters. Fetch latency excludes the long-poll wait, so it measures the read itself.
 */
@Singleton
public class ServiceMetrics {
    private final Counter produceRequests;
    private final Counter produceRecords;
    private final Counter produceBytes;
    private final Timer produceLatency;
    private final Counter fetchRequests;
    private final Counter fetchRecords;
    private final Counter fetchBytes;
    private final Timer fetchLatency;
    private final DistributionSummary fetchBatch;
    private final Timer fsync;
    private final Timer durableWait;

    public ServiceMetrics(MeterRegistry registry) {
        produceRequests = Counter.builder("tierlog.produce.requests").description("Produce requests answered 200")
                .register(registry);
        produceRecords = Counter.builder("tierlog.produce.records").description("Records produced").register(registry);
        produceBytes = Counter.builder("tierlog.produce.bytes").baseUnit("bytes")
                .description("Produce request body bytes").register(registry);
        produceLatency = latency("tierlog.produce.latency", "Produce request latency, parse to durable append", registry);
        fetchRequests = Counter.builder("tierlog.fetch.requests").description("Fetch requests answered 200")
                .register(registry);
        fetchRecords = Counter.builder("tierlog.fetch.records").description("Records fetched").register(registry);
        fetchBytes = Counter.builder("tierlog.fetch.bytes").baseUnit("bytes")
                .description("Fetch response body bytes").register(registry);
        fetchLatency = latency("tierlog.fetch.latency", "Fetch read latency (long-poll wait excluded)", registry);
        fetchBatch = DistributionSummary.builder("tierlog.fetch.batch.records").description("Records per fetch")
                .register(registry);
        fsync = latency("tierlog.log.fsync", "fsync of hot segment data", registry);
        durableWait = latency("tierlog.produce.durable.wait",
                "Time an append waited after its write for the fsync covering it (fsync=always)", registry);
    }

    /** The writers' reports, recorded into {@code tierlog_log_fsync_seconds} and {@code tierlog_produce_durable_wait_seconds}. */
    public SyncMeters syncMeters() {
        return new SyncMeters(nanos -> fsync.record(nanos, TimeUnit.NANOSECONDS),
                nanos -> durableWait.record(nanos, TimeUnit.NANOSECONDS));
    }

    private static Timer latency(String name, String description, MeterRegistry registry) {
        return Timer.builder(name).description(description).publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(50_000)).maximumExpectedValue(Duration.ofSeconds(30))
                .register(registry);
    }

    public void produced(int records, int bodyBytes, long nanos) {
        produceRequests.increment();
        produceRecords.increment(records);
        produceBytes.increment(bodyBytes);
        produceLatency.record(Duration.ofNanos(nanos));
    }

    public void fetched(int records, int responseBytes, long nanos) {
        fetchRequests.increment();
        fetchRecords.increment(records);
        fetchBytes.increment(responseBytes);
        fetchLatency.record(Duration.ofNanos(nanos));
        fetchBatch.record(records);
    }
}
