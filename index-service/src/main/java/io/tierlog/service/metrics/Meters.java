package io.tierlog.service.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.tierlog.ingest.ProduceAdmission;
import io.tierlog.log.compaction.CompactionStats;
import io.tierlog.tiering.ColdCompactionStats;
import io.tierlog.tiering.StoreRequests;
import io.tierlog.tiering.TieringStats;
import jakarta.inject.Singleton;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;
import java.util.function.ToDoubleFunction;

/**
 * The one place the service registers meters (besides {@link ServiceMetrics}, the produce and fetch meters of this
 * package). Each concern keeps its own statistics or increments the meters handed to it here, and never sees the
 * {@link MeterRegistry}: a meter's name, description, unit and tags are written once, in this package, where
 * operators and the alarms (terraform/modules/alarms) find them. LayeringTest fails if another package builds a meter.
 *
 * <p>To add a meter: add a method here (or extend the concern's method) that registers it over the concern's stats
 * object, and call it where the concern is built. Names are Micrometer's dotted names; the Prometheus scrape shows
 * them with underscores and {@code _total}/{@code _seconds} suffixes. Thread-safe (the registry is).
 */
@Singleton
public class Meters {
    /** Counter of records written to stream connections ({@code tierlog_stream_records_total}). */
    public static final String STREAM_RECORDS_SENT = "tierlog.stream.records";

    private final MeterRegistry registry;

    public Meters(MeterRegistry registry) {
        this.registry = registry;
    }

    // --- tiering and the cold tier -----------------------------------------------------------------------------

    /** The tierer's, the cold cache's and retention's statistics, read on scrape. */
    public void tiering(TieringStats s) {
        Gauge.builder("tierlog_tiering_pending_segments", s, TieringStats::pendingSegments)
                .description("Sealed hot segments not yet committed to the cold tier").register(registry);
        Gauge.builder("tierlog_tiering_pending_bytes", s, TieringStats::pendingBytes)
                .description("Bytes of sealed hot segments not yet committed to the cold tier").register(registry);
        Gauge.builder("tierlog_tiering_backlog_exceeded", s, x -> x.backlogExceeded() ? 1 : 0)
                .description("1 while pending bytes exceed tierlog.tiering.max-pending-bytes").register(registry);
        Gauge.builder("tierlog_cold_store_available", s, x -> x.storeAvailable() ? 1 : 0)
                .description("0 while the tierer finds the object store unavailable").register(registry);
        FunctionCounter.builder("tierlog_tiering_upload_errors", s, TieringStats::uploadErrors)
                .description("Failed tiering attempts (uploads or commits)").register(registry);
        FunctionCounter.builder("tierlog_tiering_uploaded_segments", s, TieringStats::segmentsUploaded)
                .register(registry);
        FunctionCounter.builder("tierlog_tiering_uploaded_bytes", s, TieringStats::bytesUploaded).register(registry);
        FunctionCounter.builder("tierlog_cold_cache_hits", s, TieringStats::cacheHits)
                .description("Cold chunk reads served from the on-disk cache").register(registry);
        FunctionCounter.builder("tierlog_cold_cache_misses", s, TieringStats::cacheMisses)
                .description("Cold chunk reads that needed a ranged GET").register(registry);
        FunctionCounter.builder("tierlog_cold_cache_admissions_deferred", s, TieringStats::cacheAdmissionsDeferred)
                .description("Fetched chunks not written to the on-disk cache on their first fetch (a scan's)")
                .register(registry);
        FunctionCounter.builder("tierlog_cold_cache_writes_dropped", s, TieringStats::cacheWritesDropped)
                .description("Fetched chunks not written to the on-disk cache because its disk writes were behind")
                .register(registry);
        FunctionCounter.builder("tierlog_cold_range_gets", s, TieringStats::rangeGets).register(registry);
        FunctionCounter.builder("tierlog_cold_read_ahead_unread_released", s, TieringStats::readAheadUnreadReleased)
                .description("Chunks fetched ahead of a cold reader and released unread after 60 s (reader gone)")
                .register(registry);
        FunctionCounter.builder("tierlog_retention_hot_segments_evicted", s, TieringStats::hotSegmentsEvicted)
                .register(registry);
        FunctionCounter.builder("tierlog_retention_cold_segments_deleted", s, TieringStats::coldSegmentsDeleted)
                .register(registry);
        FunctionCounter.builder("tierlog_tiering_orphans_deleted", s, TieringStats::orphansDeleted)
                .register(registry);
    }

    /** The log cleaner's statistics, read on scrape. */
    public void compaction(CompactionStats s) {
        Gauge.builder("tierlog_compaction_max_dirty_ratio", s, CompactionStats::maxDirtyRatio)
                .description("Largest dirty/cleanable bytes ratio of a compacted partition in the last pass")
                .register(registry);
        FunctionCounter.builder("tierlog_compaction_cleaned_bytes", s, CompactionStats::bytesCleaned)
                .description("Bytes of hot segments read by the cleaner to compact them").register(registry);
        FunctionCounter.builder("tierlog_compaction_removed_bytes", s, CompactionStats::bytesRemoved)
                .description("Bytes compaction removed from hot segments").register(registry);
        FunctionCounter.builder("tierlog_compaction_rewritten_segments", s, CompactionStats::segmentsRewritten)
                .register(registry);
        FunctionCounter.builder("tierlog_compaction_passes", s, CompactionStats::passes).register(registry);
        FunctionCounter.builder("tierlog_compaction_pass_seconds", s, CompactionStats::passSeconds)
                .description("Total time of compaction passes (divide by tierlog_compaction_passes for time per pass)")
                .register(registry);
    }

    /** The cold cleaner's statistics and its object-store requests, read on scrape. */
    public void coldCompaction(ColdCompactionStats s) {
        Gauge.builder("tierlog_cold_compaction_max_dirty_ratio", s, ColdCompactionStats::maxDirtyRatio)
                .description("Largest dirty/cleanable bytes ratio of a compacted partition's cold tier in the last pass")
                .register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_cleaned_bytes", s, ColdCompactionStats::bytesRead)
                .description("Bytes of cold segments downloaded and filtered by the cold cleaner").register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_written_bytes", s, ColdCompactionStats::bytesWritten)
                .description("Bytes of compacted objects the cold cleaner uploaded").register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_replaced_segments", s, ColdCompactionStats::segmentsReplaced)
                .register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_retired_deleted", s, ColdCompactionStats::retiredDeleted)
                .description("Replaced cold objects deleted after the orphan grace").register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_passes", s, ColdCompactionStats::passes).register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_failures", s, ColdCompactionStats::failures)
                .description("Partitions whose cold compaction failed (retried next pass), and passes paused by an "
                        + "unavailable object store").register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_pass_seconds", s, ColdCompactionStats::passSeconds)
                .description("Total time of cold compaction passes (divide by tierlog_cold_compaction_passes)")
                .register(registry);
        StoreRequests r = s.requests();
        String requests = "Object-store requests of the cold cleaner (an upload counts once even when multipart)";
        FunctionCounter.builder("tierlog_cold_compaction_requests", r, StoreRequests::gets).tag("kind", "get")
                .description(requests).register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_requests", r, StoreRequests::puts).tag("kind", "put")
                .description(requests).register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_requests", r, StoreRequests::lists).tag("kind", "list")
                .description(requests).register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_requests", r, StoreRequests::deletes).tag("kind", "delete")
                .description(requests).register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_requests", r, StoreRequests::heads).tag("kind", "head")
                .description(requests).register(registry);
    }

    /** {@code tierlog_cold_read_seconds}: the latency of reads served from the cold tier, recorded by the caller. */
    public Timer coldReads() {
        return Timer.builder("tierlog_cold_read")
                .description("Latency of reads served from the cold tier (ranged GETs through the chunk cache)")
                .publishPercentileHistogram()
                .register(registry);
    }

    // --- the hot tier and memory -------------------------------------------------------------------------------

    /**
     * The hot tier's backpressure: {@code tierlog_produce_rejected_total{reason}} (refusals by reason),
     * {@code tierlog_hot_tier_full} (the alarm's metric) and {@code tierlog_hot_volume_used_ratio}.
     */
    public void hotTier(ProduceAdmission admission) {
        for (ProduceAdmission.Reason reason : ProduceAdmission.Reason.values()) {
            FunctionCounter.builder("tierlog.produce.rejected", admission, a -> a.rejected(reason))
                    .tag("reason", reason.slug())
                    .description("Produce requests refused with 503 hot-tier-full, by reason").register(registry);
        }
        Gauge.builder("tierlog.hot.tier.full", admission, a -> a.refusal().isPresent() ? 1 : 0)
                .description("1 while produce is refused with 503 hot-tier-full").register(registry);
        Gauge.builder("tierlog.hot.volume.used.ratio", admission, a -> a.volume().usedRatio())
                .description("Used share of the hot volume (1 - usable/total), sampled at most once a second")
                .register(registry);
    }

    /** {@code tierlog_direct_memory_bytes}: direct memory held by {@code memory} (weakly referenced, read on scrape). */
    public <T> void directMemory(T memory, ToDoubleFunction<T> heldBytes) {
        Gauge.builder("tierlog.direct.memory", memory, heldBytes).baseUnit("bytes")
                .description("Direct memory held by record-batch fetches and streams until their bytes are written, and by "
                        + "record-batch produce bodies until they are appended")
                .register(registry);
    }

    // --- the edges ---------------------------------------------------------------------------------------------

    /** {@link #STREAM_RECORDS_SENT}, incremented by the stream route per record it writes. */
    public Counter streamRecordsSent() {
        return Counter.builder(STREAM_RECORDS_SENT).description("Records handed to SSE connections")
                .register(registry);
    }

    /** {@code tierlog_produce_rejected_total{reason="quota"}}. */
    public Counter produceQuotaRejected() {
        return Counter.builder("tierlog.produce.rejected").tag("reason", "quota")
                .description("Produce requests refused with 429 quota-exceeded").register(registry);
    }

    /** {@code tierlog_topic_mutations_rejected_total{reason="quota"}}: HTTP topic creations and deletions. */
    public Counter mutationQuotaRejected() {
        return Counter.builder("tierlog.topic.mutations.rejected").tag("reason", "quota")
                .description("Topic creations and deletions over HTTP refused with 429 quota-exceeded")
                .register(registry);
    }

    /** {@code tierlog_fetch_rejected_total{reason="quota"}}. */
    public Counter fetchQuotaRejected() {
        return Counter.builder("tierlog.fetch.rejected").tag("reason", "quota")
                .description("Fetch requests and streams refused with 429 quota-exceeded").register(registry);
    }

    /** The sink of the metrics Kafka clients push (KIP-714), at most {@code maxSeries} series at once. */
    public ClientTelemetryMeters clientTelemetry(int maxSeries) {
        return new ClientTelemetryMeters(registry, maxSeries);
    }

    /** Counts a request refused 403 in {@code tierlog_auth_denied_total{operation}}. */
    public void authDenied(String operation) {
        Counter.builder("tierlog.auth.denied").description("Requests refused 403 forbidden, by operation")
                .tag("operation", operation).register(registry).increment();
    }

    /** Counts a request refused 401 or 429 in {@code tierlog_auth_failures_total{reason}}. */
    public void authFailed(String reason) {
        Counter.builder("tierlog.auth.failures").description("Requests refused 401 or 429, by reason")
                .tag("reason", reason).register(registry).increment();
    }

    // --- share groups ------------------------------------------------------------------------------------------

    /** The counters the share-group code increments. */
    public record ShareCounters(Counter leased, Counter redeliveries, Counter deadLettered) {
    }

    /**
     * Share-group meters: the counters {@code tierlog.share.leased}, {@code tierlog.share.redeliveries},
     * {@code tierlog.share.dead.lettered}, and gauges over the given suppliers (read on scrape, so they must be cheap).
     */
    public ShareCounters shareGroups(DoubleSupplier recordsLeased, DoubleSupplier recordsAvailable,
                                     DoubleSupplier oldestRecordAgeMs) {
        Counter leased = Counter.builder("tierlog.share.leased").description("Records leased by share groups")
                .register(registry);
        Counter redeliveries = Counter.builder("tierlog.share.redeliveries")
                .description("Records leased again after a release or an expired lease").register(registry);
        Counter deadLettered = Counter.builder("tierlog.share.dead.lettered")
                .description("Records produced to a share group's dead-letter topic").register(registry);
        Gauge.builder("tierlog.share.records.leased", recordsLeased::getAsDouble)
                .description("Records leased now, over the share-partitions this instance served").register(registry);
        Gauge.builder("tierlog.share.records.available", recordsAvailable::getAsDouble)
                .description("Records available for (re)delivery in the in-flight windows this instance served")
                .register(registry);
        Gauge.builder("tierlog.share.oldest.record.age", oldestRecordAgeMs::getAsDouble).baseUnit("milliseconds")
                .description("Age of the oldest record a share group has not yet accepted or archived")
                .register(registry);
        return new ShareCounters(leased, redeliveries, deadLettered);
    }

    // --- per-partition and per-group gauges (registered and removed as topics and groups come and go) ---------

    /** {@code tierlog_partition_high_watermark{topic,partition}} over {@code value}. */
    public Gauge highWatermark(Tags tags, AtomicLong value) {
        return gauge("tierlog.partition.high.watermark", "Offset after the last visible record", tags, value);
    }

    /** {@code tierlog_group_lag{group,topic,partition}} over {@code value}. */
    public Gauge groupLag(Tags tags, AtomicLong value) {
        return gauge("tierlog.group.lag", "High watermark minus committed offset", tags, value);
    }

    /** {@code tierlog_group_lag_seconds{group,topic,partition}}, in seconds, over {@code millis}. */
    public Gauge groupLagSeconds(Tags tags, AtomicLong millis) {
        return Gauge.builder("tierlog.group.lag.seconds", millis, ms -> ms.get() / 1000.0)
                .description("Now minus the timestamp of the first unconsumed record, in seconds; 0 when caught up")
                .tags(tags).register(registry);
    }

    /** {@code tierlog_group_total_lag{group}} over {@code value}. */
    public Gauge groupTotalLag(Tags tags, AtomicLong value) {
        return gauge("tierlog.group.total.lag", "Sum of the group's partition lags", tags, value);
    }

    /** Removes a gauge of a deleted topic or a vanished group. */
    public void remove(Meter meter) {
        registry.remove(meter);
    }

    private Gauge gauge(String name, String description, Tags tags, AtomicLong value) {
        return Gauge.builder(name, value, AtomicLong::get).description(description).tags(tags).register(registry);
    }
}
