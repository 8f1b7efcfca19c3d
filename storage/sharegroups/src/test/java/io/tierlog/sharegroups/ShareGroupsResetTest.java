package io.tierlog.sharegroups;

import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.ProduceRecord;
import io.tierlog.ingest.ProduceRequest;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Kafka's AlterShareGroupOffsets and DeleteShareGroupOffsets on the engine: {@code resetStart}, {@code deleteTopic}. */
class ShareGroupsResetTest {
    @TempDir
    Path dir;
    IngestService ingest;
    final ManualClock clock = new ManualClock(1_000_000);

    @BeforeEach
    void start() {
        ingest = new IngestService(new IngestConfig(dir, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), 1 << 20), clock, 3);
        ingest.topics().create("t", 2, TopicConfig.DEFAULTS);
        ingest.topics().create("u", 1, TopicConfig.DEFAULTS);
    }

    @AfterEach
    void stop() {
        ingest.close();
    }

    /** An instance of the service on the volume (each process has its own). */
    ShareGroups open() {
        return new ShareGroups(dir, ingest.topics(), new HotShareRecords(dir), ingest, clock, 2000, Duration.ZERO,
                ShareMeters.NONE);
    }

    void produce(String topic, int partition, int n) {
        List<ProduceRecord> rs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rs.add(new ProduceRecord(null, ("v" + i).getBytes(StandardCharsets.UTF_8), List.of(), partition, null));
        }
        ingest.produce(topic, new ProduceRequest(rs, Optional.empty()));
    }

    static List<Long> offsets(List<LeasedRecord> leased) {
        return leased.stream().map(l -> l.record().offset()).toList();
    }

    long startOffset(ShareGroups shares, String topic, int partition) {
        return shares.describe("g").orElseThrow().topics().stream().filter(t -> t.topic().equals(topic))
                .flatMap(t -> t.partitions().stream()).filter(p -> p.partition() == partition).findFirst()
                .orElseThrow().startOffset();
    }

    @Test
    void aResetForgetsWhatWasInFlightAndDeliversFromTheNewStartOffset() {
        ShareGroups shares = open();
        ShareGroups other = open(); // another instance, which keeps the state file open and its state cached
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, null));
        produce("t", 0, 10);
        List<LeasedRecord> before = other.lease("g", "t", 3, 30_000);
        assertThat(offsets(before)).containsExactly(0L, 1L, 2L);

        shares.resetStart("g", new TopicPartition("t", 0), 5);

        assertThat(startOffset(shares, "t", 0)).isEqualTo(5);
        assertThat(other.acknowledge("g", "t", List.of(new Ack(before.get(0).lease(), AckType.ACCEPT))))
                .as("a lease of the old window dies with it").containsExactly(
                        new AckResult(before.get(0).lease(), false, AckResult.LEASE_EXPIRED));
        List<LeasedRecord> after = other.lease("g", "t", 10, 30_000);
        assertThat(offsets(after)).as("the other instance sees the reset").containsExactly(5L, 6L, 7L, 8L, 9L);
        assertThat(after).allMatch(l -> l.deliveryCount() == 1);
    }

    @Test
    void aResetBackToTheStartRedeliversRecordsAlreadyAcceptedWithFreshDeliveryCounts() {
        ShareGroups shares = open();
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, null));
        produce("t", 0, 4);
        List<LeasedRecord> first = shares.lease("g", "t", 10, 30_000);
        shares.acknowledge("g", "t", List.of(new Ack(first.get(0).lease(), AckType.RELEASE)));
        List<Ack> accepts = new ArrayList<>();
        first.subList(1, 4).forEach(l -> accepts.add(new Ack(l.lease(), AckType.ACCEPT)));
        shares.acknowledge("g", "t", accepts);
        assertThat(offsets(shares.lease("g", "t", 10, 30_000))).as("redelivered once").containsExactly(0L);

        shares.resetStart("g", new TopicPartition("t", 0), 0);

        List<LeasedRecord> again = shares.lease("g", "t", 10, 30_000);
        assertThat(offsets(again)).containsExactly(0L, 1L, 2L, 3L);
        assertThat(again).allMatch(l -> l.deliveryCount() == 1);
    }

    @Test
    void aResetCreatesTheShareGroupAndAStartBeyondTheHighWatermarkWaitsForRecordsToReachIt() {
        ShareGroups shares = open();
        produce("t", 0, 3);
        shares.resetStart("g", new TopicPartition("t", 0), 5);
        assertThat(startOffset(shares, "t", 0)).isEqualTo(5);
        assertThat(shares.describe("g").orElseThrow().topics().get(0).partitions().get(0).lag()).isZero();
        assertThat(shares.lease("g", "t", 10, 30_000)).isEmpty();

        produce("t", 0, 4); // offsets 3..6
        assertThat(offsets(shares.lease("g", "t", 10, 30_000))).containsExactly(5L, 6L);
    }

    @Test
    void aResetTouchesOnlyItsPartition() {
        ShareGroups shares = open();
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, null));
        produce("t", 0, 2);
        produce("t", 1, 2);
        List<LeasedRecord> leased = shares.lease("g", "t", 10, 30_000);
        assertThat(leased).hasSize(4);
        LeasedRecord onOne = leased.stream().filter(l -> l.partition() == 1).findFirst().orElseThrow();

        shares.resetStart("g", new TopicPartition("t", 0), 1);

        assertThat(shares.acknowledge("g", "t", List.of(new Ack(onOne.lease(), AckType.ACCEPT))))
                .allMatch(AckResult::ok);
        assertThat(offsets(shares.lease("g", "t", 10, 30_000))).containsExactly(1L);
    }

    @Test
    void anUnknownPartitionOrANegativeOffsetIsRefusedAndChangesNothing() {
        ShareGroups shares = open();
        assertThatThrownBy(() -> shares.resetStart("g", new TopicPartition("nope", 0), 0))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.UNKNOWN_TOPIC));
        assertThatThrownBy(() -> shares.resetStart("g", new TopicPartition("t", 2), 0))
                .isInstanceOfSatisfying(TierlogException.class,
                        e -> assertThat(e.type()).isEqualTo(ErrorType.UNKNOWN_PARTITION));
        assertThatThrownBy(() -> shares.resetStart("g", new TopicPartition("t", 0), -1))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST));
        assertThat(shares.describe("g")).isEmpty();
    }

    @Test
    void deletingATopicsStateRestartsItWhereTheGroupsStartConfigSays() {
        ShareGroups shares = open();
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, null));
        produce("t", 0, 3);
        produce("u", 0, 2);
        List<LeasedRecord> leased = shares.lease("g", "t", 10, 30_000);
        List<Ack> accepts = new ArrayList<>();
        leased.forEach(l -> accepts.add(new Ack(l.lease(), AckType.ACCEPT)));
        shares.acknowledge("g", "t", accepts);
        assertThat(shares.lease("g", "u", 10, 30_000)).hasSize(2);
        assertThat(shares.lease("g", "t", 10, 30_000)).isEmpty();

        assertThat(shares.deleteTopic("g", "t")).isTrue();

        assertThat(shares.describe("g").orElseThrow().topics()).extracting(ShareDescription.Topic::topic)
                .containsExactly("u");
        assertThat(offsets(open().lease("g", "t", 10, 30_000))).as("earliest again").containsExactly(0L, 1L, 2L);
        assertThat(shares.lease("g", "u", 10, 30_000)).as("u's records are still leased").isEmpty();
        assertThat(shares.deleteTopic("g", "u")).isTrue();
        assertThat(shares.deleteTopic("g", "u")).as("nothing left to delete").isFalse();
        assertThat(shares.deleteTopic("other", "t")).isFalse();
    }

    @Test
    void deletingATopicsStateOfALatestGroupSkipsTheRecordsAlreadyThere() {
        ShareGroups shares = open();
        shares.resetStart("g", new TopicPartition("t", 0), 0); // latest by config, but reset to the start
        produce("t", 0, 2);
        assertThat(offsets(shares.lease("g", "t", 10, 30_000))).containsExactly(0L, 1L);

        shares.deleteTopic("g", "t");

        assertThat(shares.lease("g", "t", 10, 30_000)).as("latest: nothing until new records").isEmpty();
        produce("t", 0, 1);
        assertThat(offsets(shares.lease("g", "t", 10, 30_000))).containsExactly(2L);
    }

    @Test
    void aLeaseFromBeforeAResetCannotAcknowledgeTheSameOffsetDeliveredAfterIt() {
        ShareGroups shares = open();
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, null));
        produce("t", 0, 1);
        LeasedRecord before = shares.lease("g", "t", 1, 30_000).get(0);

        shares.resetStart("g", new TopicPartition("t", 0), 0);
        LeasedRecord after = shares.lease("g", "t", 1, 30_000).get(0);
        assertThat(after.record().offset()).isZero();
        assertThat(after.deliveryCount()).as("same offset, same delivery count as before").isEqualTo(1);

        assertThat(shares.acknowledge("g", "t", List.of(new Ack(before.lease(), AckType.ACCEPT))))
                .as("the old lease is of another incarnation").noneMatch(AckResult::ok);
        assertThat(shares.acknowledge("g", "t", List.of(new Ack(after.lease(), AckType.ACCEPT))))
                .allMatch(AckResult::ok);
    }
}
