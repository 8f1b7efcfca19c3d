package io.tierlog.ingest;

import io.tierlog.http.JsonProduce;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.HotSegment;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import io.tierlog.testkit.TmpfsMount;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Backpressure on a real full volume: the hot directory is an 8 MiB tmpfs (skipped where this machine cannot mount
 * one). A write that runs out of space is truncated back and answered 503 {@code hot-tier-full}; the used-ratio
 * limit refuses before that; both recover by themselves once space is freed, and every acknowledged record is read
 * back, with dense offsets, also by a fresh service (a restart).
 */
class HotTierFullTest {
    private static final long VOLUME_BYTES = 8L * 1024 * 1024;
    private static final String TOPIC = "events";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private TmpfsMount mount;
    private Path data;
    private IngestService service;

    @BeforeEach
    void mountSmallVolume() {
        Path dir = Path.of("target", "tmpfs-" + UUID.randomUUID()).toAbsolutePath();
        mount = TmpfsMount.tryMount(dir, VOLUME_BYTES).orElse(null);
        assumeTrue(mount != null, "cannot mount a tmpfs here (needs Linux and root)");
        data = dir.resolve("hot");
    }

    @AfterEach
    void unmount() throws IOException {
        if (service != null) {
            service.close();
        }
        if (mount != null) {
            mount.close();
            Files.deleteIfExists(mount.dir());
        }
    }

    private IngestService start(ProduceAdmission admission) {
        IngestService s = new IngestService(new IngestConfig(data, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), 1 << 20),
                clock, () -> 0, io.tierlog.log.SyncMeters.NONE, admission);
        if (s.topics().find(TOPIC).isEmpty()) {
            // Segments of 1 MiB: filling the volume rolls several times, so rolls and checkpoints meet ENOSPC too.
            s.topics().create(TOPIC, 1, TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1 << 20)));
        }
        return s;
    }

    @Test
    void aWriteOutOfSpaceIsRolledBackRefusedAndRecoversOnceSpaceIsFreed() throws IOException {
        service = start(ProduceAdmission.noSpaceOnly(data, clock));
        List<String> acked = new ArrayList<>();
        TierlogException refused = null;
        for (int n = 0; refused == null; n++) {
            try {
                JsonProduce.produce(service, TOPIC, body(n));
                acked.add(value(n));
            } catch (TierlogException e) {
                refused = e;
            }
        }
        assertThat(refused.type()).isEqualTo(ErrorType.HOT_TIER_FULL);
        assertThat(refused.extra()).containsEntry("reason", "no-space")
                .containsEntry(TierlogException.RETRY_AFTER_SECONDS, 1L);
        assertThat(refused.getMessage()).doesNotContain(data.toString());
        assertThat(acked).hasSizeGreaterThan(20);
        assertReadsExactly(acked);
        // The failed write was taken back out: the last segment ends exactly at the last acknowledged batch.
        io.tierlog.log.Position end = new HotLog(data).reader(TP).end(null);
        assertThat(end.offset()).isEqualTo(acked.size());
        assertThat(new HotLog(data).segmentBytes(TP, end.segmentBase())).isEqualTo(end.position());

        // Remembered until the next sample: refused without writing, nothing appended.
        assertThatThrownBy(() -> JsonProduce.produce(service, TOPIC, body(10_000))).isInstanceOf(TierlogException.class)
                .extracting(e -> ((TierlogException) e).type()).isEqualTo(ErrorType.HOT_TIER_FULL);
        assertReadsExactly(acked);

        // Free space (evict the oldest sealed segment, as retention does once it is tiered) and let a sample pass:
        // produce goes on at the next dense offset.
        long oldest = new HotLog(data).reader(TP).segmentBases().get(0);
        long next = new HotLog(data).reader(TP).segmentBases().get(1);
        assertThat(new HotLog(data).evictBelow(TP, next)).extracting(HotSegment::baseOffset).containsExactly(oldest);
        clock.advance(ProduceAdmission.SAMPLE_INTERVAL);
        int n = acked.size();
        ProduceResult after = JsonProduce.produce(service, TOPIC, body(n));
        acked.add(value(n));
        assertThat(after.offsets().get(0).offset()).isEqualTo(n);

        // A restart reads every acknowledged record still on the volume, at its offset.
        service.close();
        service = start(ProduceAdmission.noSpaceOnly(data, clock));
        ReadResult all = new HotLog(data).reader(TP).read(next, null, 100_000, Integer.MAX_VALUE);
        assertThat(all.records()).extracting(HotTierFullTest::text).containsExactlyElementsOf(acked.subList((int) next, acked.size()));
        assertThat(JsonProduce.produce(service, TOPIC, body(n + 1)).offsets().get(0).offset()).isEqualTo(n + 1);
    }

    @Test
    void theUsedRatioRefusesBeforeTheVolumeIsFullAndIsSampledAtMostOncePerInterval() throws IOException {
        ProduceAdmission admission = new ProduceAdmission(data, 0.5, () -> false, Duration.ofSeconds(3), clock);
        service = start(admission);
        JsonProduce.produce(service, TOPIC, body(0));
        Path filler = data.resolve("filler");
        fill(filler, VOLUME_BYTES * 6 / 10);

        // The sample taken by the first produce is still fresh: admitted.
        JsonProduce.produce(service, TOPIC, body(1));
        clock.advance(ProduceAdmission.SAMPLE_INTERVAL);
        TierlogException e = catchThrowableOfType(() -> JsonProduce.produce(service, TOPIC, body(2)), TierlogException.class);
        assertThat(e.type()).isEqualTo(ErrorType.HOT_TIER_FULL);
        assertThat(e.extra()).containsEntry("reason", "used-ratio").containsEntry(TierlogException.RETRY_AFTER_SECONDS, 3L);
        assertThat(e.getMessage()).contains("tierlog.hot.max-used-ratio");
        assertThat(admission.rejected(ProduceAdmission.Reason.USED_RATIO)).isEqualTo(1);
        assertThat(admission.refusal()).isPresent();
        assertReadsExactly(List.of(value(0), value(1)));

        Files.delete(filler);
        assertThat(admission.refusal()).as("stale sample until the interval passes").isPresent();
        clock.advance(ProduceAdmission.SAMPLE_INTERVAL);
        assertThat(JsonProduce.produce(service, TOPIC, body(2)).offsets().get(0).offset()).isEqualTo(2);
        assertThat(admission.refusal()).isEmpty();
    }

    @Test
    void aTieringBacklogRefusesBatchesAndJsonAlike() {
        boolean[] backlog = {true};
        ProduceAdmission admission = new ProduceAdmission(data, 1.0, () -> backlog[0], Duration.ofSeconds(1), clock);
        service = start(admission);
        TierlogException e = catchThrowableOfType(() -> JsonProduce.produce(service, TOPIC, body(0)), TierlogException.class);
        assertThat(e.type()).isEqualTo(ErrorType.HOT_TIER_FULL);
        assertThat(e.extra()).containsEntry("reason", "tiering-backlog");
        TierlogException batches = catchThrowableOfType(() -> service.produceBatches(TOPIC, 0,
                KafkaBatches.values("a", "b")), TierlogException.class);
        assertThat(batches.type()).isEqualTo(ErrorType.HOT_TIER_FULL);
        assertThat(admission.rejected(ProduceAdmission.Reason.TIERING_BACKLOG)).isEqualTo(2);
        backlog[0] = false;
        assertThat(JsonProduce.produce(service, TOPIC, body(0)).offsets().get(0).offset()).isZero();
    }

    private void assertReadsExactly(List<String> values) {
        ReadResult all = new HotLog(data).reader(TP).read(0, null, 100_000, Integer.MAX_VALUE);
        assertThat(all.records()).extracting(HotTierFullTest::text).containsExactlyElementsOf(values);
        for (int i = 0; i < all.records().size(); i++) {
            assertThat(all.records().get(i).offset()).isEqualTo(i);
        }
    }

    private static void fill(Path file, long bytes) throws IOException {
        byte[] chunk = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long written = 0; written < bytes; written += chunk.length) {
                out.write(chunk);
            }
        }
    }

    /** One record of about 100 KiB, so that the volume fills in a few dozen requests and a write fails part-way. */
    private static byte[] body(int n) {
        return ("{\"records\":[{\"partition\":0,\"value\":\"" + value(n) + "\"}]}").getBytes(StandardCharsets.UTF_8);
    }

    private static String value(int n) {
        return n + "-" + "x".repeat(100 * 1024);
    }

    private static String text(LogRecord r) {
        // value is stored as compact JSON text: a JSON string with quotes
        String json = new String(r.value(), StandardCharsets.UTF_8);
        return json.substring(1, json.length() - 1);
    }
}
