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

/** Range leases (ADR 0042): acked all or nothing, narrowed, fenced like per-record leases. */
class ShareGroupsRangeTest {
    @TempDir
    Path dir;
    IngestService ingest;
    final ManualClock clock = new ManualClock(1_000_000);
    ShareGroups shares;

    @BeforeEach
    void start() {
        ingest = new IngestService(new IngestConfig(dir, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), 1 << 20), clock, 3);
        ingest.topics().create("t", 1, TopicConfig.DEFAULTS);
        ingest.topics().create("u", 1, TopicConfig.DEFAULTS);
        ingest.topics().create("dlq", 1, TopicConfig.DEFAULTS);
        shares = new ShareGroups(dir, ingest.topics(), new HotShareRecords(dir), ingest, clock, 2000, Duration.ZERO,
                ShareMeters.NONE);
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, "dlq"));
    }

    @AfterEach
    void stop() {
        ingest.close();
    }

    void produce(String topic, int n) {
        List<ProduceRecord> rs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rs.add(new ProduceRecord(null, ("v" + i).getBytes(StandardCharsets.UTF_8), List.of(), 0, null));
        }
        ingest.produce(topic, new ProduceRequest(rs, Optional.empty()));
    }

    ShareDescription.Partition partition() {
        return shares.describe("g").orElseThrow().topics().stream().filter(t -> t.topic().equals("t")).findFirst()
                .orElseThrow().partitions().get(0);
    }

    AckResult ack(String lease, AckType type) {
        return shares.acknowledge("g", "t", List.of(new Ack(lease, type))).get(0);
    }

    @Test
    void aLeaseOfConsecutiveRecordsIsOneRangeAndItsAcceptTakesThemAll() {
        produce("t", 5);
        ShareGroups.Leased got = shares.leaseOrWake("g", "t", 10, 60_000);
        assertThat(got.ranges()).singleElement().satisfies(r -> {
            assertThat(r.firstOffset()).isZero();
            assertThat(r.lastOffset()).isEqualTo(4);
            assertThat(r.deliveryCount()).isEqualTo(1);
            assertThat(RangeLease.decode(r.lease())).contains(new RangeLease("g", "t", 0, 0, 4,
                    RangeLease.decode(r.lease()).orElseThrow().incarnation(), 1));
        });
        assertThat(ack(got.ranges().get(0).lease(), AckType.ACCEPT).ok()).isTrue();
        assertThat(partition().startOffset()).isEqualTo(5);
        assertThat(partition().leased()).isZero();
        assertThat(ack(got.ranges().get(0).lease(), AckType.ACCEPT))
                .isEqualTo(new AckResult(got.ranges().get(0).lease(), false, "lease-expired"));
    }

    @Test
    void aRecordAckedOnItsOwnMakesTheRangeFailAndChangeNothing() {
        produce("t", 5);
        ShareGroups.Leased got = shares.leaseOrWake("g", "t", 10, 60_000);
        String range = got.ranges().get(0).lease();
        assertThat(ack(got.records().get(2).lease(), AckType.ACCEPT).ok()).isTrue();
        assertThat(ack(range, AckType.REJECT)).isEqualTo(new AckResult(range, false, "lease-expired"));
        assertThat(partition().leased()).as("nothing of the range changed").isEqualTo(4);
        assertThat(partition().startOffset()).isZero();
        assertThat(deadLetters()).isZero();
        // The records around it are still acked by narrowed ranges or on their own; the per-record lease of a record
        // the range took is refused.
        assertThat(shares.acknowledge("g", "t", List.of(new Ack(range, AckType.ACCEPT, 0L, 1L),
                new Ack(range, AckType.ACCEPT, 3L, null)))).containsExactly(
                new AckResult(range, true, null, 0L, 1L), new AckResult(range, true, null, 3L, null));
        assertThat(ack(got.records().get(4).lease(), AckType.ACCEPT).ok()).isFalse();
        assertThat(partition().startOffset()).isEqualTo(5);
    }

    @Test
    void aNarrowingOutsideTheRunIsABadRequestNamingTheFieldAndNothingIsApplied() {
        produce("t", 5);
        ShareGroups.Leased got = shares.leaseOrWake("g", "t", 3, 60_000);
        String range = got.ranges().get(0).lease(); // offsets 0..2
        String other = shares.leaseOrWake("g", "t", 2, 60_000).ranges().get(0).lease(); // 3..4
        record Bad(Ack ack, String field) {
        }
        for (Bad bad : List.of(new Bad(new Ack(range, AckType.ACCEPT, 3L, null), "acks[1].firstOffset"),
                new Bad(new Ack(range, AckType.ACCEPT, -1L, 1L), "acks[1].firstOffset"),
                new Bad(new Ack(range, AckType.ACCEPT, null, 3L), "acks[1].lastOffset"),
                new Bad(new Ack(range, AckType.ACCEPT, 2L, 1L), "acks[1].lastOffset"),
                new Bad(new Ack(got.records().get(0).lease(), AckType.ACCEPT, 0L, 1L), "acks[1].lastOffset"))) {
            assertThatThrownBy(() -> shares.acknowledge("g", "t", List.of(new Ack(other, AckType.ACCEPT), bad.ack())))
                    .isInstanceOfSatisfying(TierlogException.class, e -> {
                        assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
                        assertThat(e.extra()).containsEntry("field", bad.field());
                    });
        }
        assertThat(partition().leased()).as("nothing applied").isEqualTo(5);
        assertThat(shares.acknowledge("g", "t", List.of(new Ack(range, AckType.ACCEPT, 1L, 1L))).get(0).ok()).isTrue();
        assertThat(partition().leased()).isEqualTo(4);
    }

    @Test
    void aRangeThatRanOutAndWasLeasedAgainIsRefusedAndTheNewOneIsTaken() {
        produce("t", 4);
        String old = shares.leaseOrWake("g", "t", 10, 1000).ranges().get(0).lease();
        clock.advanceMillis(1000);
        assertThat(ack(old, AckType.RENEW).ok()).as("ran out").isFalse();
        ShareGroups.Leased again = shares.leaseOrWake("g", "t", 10, 1000);
        assertThat(again.ranges()).singleElement().satisfies(r -> assertThat(r.deliveryCount()).isEqualTo(2));
        assertThat(ack(old, AckType.ACCEPT).ok()).isFalse();
        assertThat(partition().leased()).isEqualTo(4);
        clock.advanceMillis(900);
        assertThat(ack(again.ranges().get(0).lease(), AckType.RENEW).ok()).isTrue();
        clock.advanceMillis(900);
        assertThat(ack(again.ranges().get(0).lease(), AckType.ACCEPT).ok()).as("renewed for every record").isTrue();
        assertThat(partition().startOffset()).isEqualTo(4);
    }

    @Test
    void aRangeOfAnotherGroupTopicOrIncarnationIsRefused() {
        produce("t", 3);
        produce("u", 3);
        RangeLease mine = RangeLease.decode(shares.leaseOrWake("g", "t", 10, 60_000).ranges().get(0).lease())
                .orElseThrow();
        for (String bad : List.of(new RangeLease("h", "t", 0, 0, 2, mine.incarnation(), 1).encode(),
                new RangeLease("g", "u", 0, 0, 2, mine.incarnation(), 1).encode(),
                new RangeLease("g", "t", 3, 0, 2, mine.incarnation(), 1).encode())) {
            assertThatThrownBy(() -> ack(bad, AckType.ACCEPT)).isInstanceOfSatisfying(TierlogException.class,
                    e -> assertThat(e.extra()).containsEntry("field", "acks[0].lease"));
        }
        String otherIncarnation = new RangeLease("g", "t", 0, 0, 2, mine.incarnation() + 1, 1).encode();
        assertThat(ack(otherIncarnation, AckType.ACCEPT).ok()).isFalse();
        assertThat(ack(new RangeLease("g", "t", 0, 0, 2, mine.incarnation(), 2).encode(), AckType.ACCEPT).ok())
                .as("another delivery count").isFalse();
        assertThat(ack(new RangeLease("g", "t", 0, 0, 3, mine.incarnation(), 1).encode(), AckType.ACCEPT).ok())
                .as("a run reaching beyond what was leased").isFalse();
        assertThat(partition().leased()).isEqualTo(3);
        assertThat(ack(mine.encode(), AckType.ACCEPT).ok()).isTrue();
    }

    @Test
    void recordsOfOneGrantWithOtherDeliveryCountsOrGapsAreSeveralRuns() {
        produce("t", 3);
        ShareGroups.Leased first = shares.leaseOrWake("g", "t", 3, 60_000); // 0..2
        String range = first.ranges().get(0).lease();
        assertThat(shares.acknowledge("g", "t", List.of(new Ack(range, AckType.RELEASE, 2L, 2L),
                new Ack(range, AckType.RELEASE, 0L, 0L))).stream().allMatch(AckResult::ok)).isTrue();
        produce("t", 3);
        ShareGroups.Leased second = shares.leaseOrWake("g", "t", 10, 60_000); // 0 (#2), 2 (#2), 3..5 (#1)
        assertThat(second.ranges()).extracting(r -> r.firstOffset() + ".." + r.lastOffset() + "#" + r.deliveryCount())
                .containsExactly("0..0#2", "2..2#2", "3..5#1");
        List<Ack> all = second.ranges().stream().map(r -> new Ack(r.lease(), AckType.ACCEPT)).toList();
        assertThat(shares.acknowledge("g", "t", all)).allMatch(AckResult::ok);
        assertThat(ack(first.records().get(1).lease(), AckType.ACCEPT).ok()).isTrue();
        assertThat(partition().startOffset()).isEqualTo(6);
    }

    @Test
    void aRejectedOrReleasedRangeDeadLettersEachRecordAsPerRecordAcksDo() {
        shares.configure("g", new ShareGroupConfig("earliest", 1, 0, "dlq"));
        produce("t", 4);
        ShareGroups.Leased got = shares.leaseOrWake("g", "t", 10, 60_000);
        String range = got.ranges().get(0).lease();
        assertThat(shares.acknowledge("g", "t", List.of(new Ack(range, AckType.REJECT, 0L, 1L),
                new Ack(range, AckType.RELEASE, 2L, 3L))).stream().allMatch(AckResult::ok)).isTrue();
        assertThat(deadLetters()).as("two rejected, two at max delivery attempts").isEqualTo(4);
        assertThat(partition().startOffset()).isEqualTo(4);
    }

    private int deadLetters() {
        return new HotShareRecords(dir).read(new TopicPartition("dlq", 0), 0, 1000).size();
    }
}
