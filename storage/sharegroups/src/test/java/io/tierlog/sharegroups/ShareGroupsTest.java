package io.tierlog.sharegroups;

import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.ProduceRecord;
import io.tierlog.ingest.ProduceRequest;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ShareGroupsTest {
    @TempDir
    Path dir;
    IngestService ingest;
    final ManualClock clock = new ManualClock(1_000_000);

    @BeforeEach
    void start() {
        ingest = new IngestService(new IngestConfig(dir, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), 1 << 20), clock, 3);
        ingest.topics().create("t", 2, TopicConfig.DEFAULTS);
        ingest.topics().create("dlq", 2, TopicConfig.DEFAULTS);
    }

    @AfterEach
    void stop() {
        ingest.close();
    }

    ShareGroups open(Clock c) {
        return new ShareGroups(dir, ingest.topics(), new HotShareRecords(dir), ingest, c, 2000, Duration.ZERO,
                ShareMeters.NONE);
    }

    void produce(int partition, int n) {
        List<ProduceRecord> rs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rs.add(new ProduceRecord(("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("v" + i).getBytes(StandardCharsets.UTF_8), List.of(), partition, null));
        }
        ingest.produce("t", new ProduceRequest(rs, Optional.empty()));
    }

    @Test
    void aDeadLetterProducedBeforeACrashIsNotProducedTwice() {
        ShareGroups shares = open(clock);
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, "dlq"));
        produce(0, 1);
        LeasedRecord l = shares.lease("g", "t", 1, 30_000).get(0);
        assertThat(shares.acknowledge("g", "t", List.of(new Ack(l.lease(), AckType.REJECT)))).allMatch(AckResult::ok);
        assertThat(deadLetters()).hasSize(1);

        // As if the process died after producing the dead letter and before writing the state without it: the
        // pending entry, with its partition and sequence, is back in the state file.
        ShareGroupFiles files = new ShareGroupFiles(dir);
        files.partition("g", new TopicPartition("t", 0)).update(s -> {
            SharePartitionState st = s.read();
            SharePartitionState.DeadLetter d = new SharePartitionState.DeadLetter();
            d.offset = 0;
            d.reason = "rejected";
            d.deliveryCount = 1;
            d.topic = "dlq";
            d.partition = st.deadLetterSequences.firstKey();
            d.sequence = st.deadLetterSequences.get(d.partition) - 1;
            st.deadLetters.add(d);
            s.write(st);
            return null;
        });

        ShareGroups restarted = open(clock);
        restarted.lease("g", "t", 10, 30_000); // any call on the share-partition produces what is pending
        assertThat(deadLetters()).as("the retry is answered as a duplicate by the idempotent producer").hasSize(1);
        SharePartitionState after = files.partition("g", new TopicPartition("t", 0)).readUnlocked();
        assertThat(after.deadLetters).isEmpty();
    }

    @Test
    void aStaleLeaseChangesNothingAndAnswersLeaseExpired() {
        ShareGroups shares = open(clock);
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, null));
        produce(0, 1);
        LeasedRecord first = shares.lease("g", "t", 1, 1000).get(0);
        clock.advanceMillis(1000);
        LeasedRecord second = shares.lease("g", "t", 1, 1000).get(0);
        assertThat(second.record().offset()).isEqualTo(first.record().offset());
        assertThat(second.deliveryCount()).isEqualTo(2);
        assertThat(shares.acknowledge("g", "t", List.of(new Ack(first.lease(), AckType.ACCEPT))))
                .containsExactly(new AckResult(first.lease(), false, "lease-expired"));
        assertThat(open(clock).acknowledge("g", "t", List.of(new Ack(second.lease(), AckType.ACCEPT))))
                .containsExactly(new AckResult(second.lease(), true, null));
        assertThat(shares.describe("g").orElseThrow().topics().get(0).partitions().get(0).startOffset()).isEqualTo(1);
    }

    @Test
    void aLeaseOfAnotherGroupOrTopicOrGarbageIsABadRequestNamingTheField() {
        ShareGroups shares = open(clock);
        produce(0, 1);
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, null));
        LeasedRecord l = shares.lease("g", "t", 1, 1000).get(0);
        for (String bad : List.of("nope", new LeaseId("h", "t", 0, 0, 1, 1).encode(), new LeaseId("g", "t", 7, 0, 1, 1).encode())) {
            assertThatThrownBy(() -> shares.acknowledge("g", "t", List.of(new Ack(l.lease(), AckType.ACCEPT),
                    new Ack(bad, AckType.ACCEPT))))
                    .isInstanceOfSatisfying(TierlogException.class, e -> {
                        assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
                        assertThat(e.extra()).containsEntry("field", "acks[1].lease");
                    });
        }
        assertThat(shares.acknowledge("g", "t", List.of(new Ack(l.lease(), AckType.ACCEPT)))).allMatch(AckResult::ok);
    }

    @Test
    void deletingAGroupDeletesItsKafkaMembersToo() {
        ShareGroupMembers members = new ShareGroupMembers(dir, ingest.topics()::find, clock, Duration.ofSeconds(45),
                Duration.ofSeconds(5), Duration.ZERO);
        members.heartbeat("g", "m1", ShareGroupMembers.JOIN, List.of("t"), "client", null);
        assertThat(members.describeAll(g -> true).keySet()).containsExactly("g");
        assertThat(open(clock).delete("g")).isTrue();
        assertThat(members.describeAll(g -> true).keySet()).isEmpty();
        assertThat(members.describe("g")).isEmpty();
    }

    @Test
    void configIsValidatedAndADeletedGroupsLeasesDie() {
        ShareGroups shares = open(clock);
        assertThatThrownBy(() -> ShareGroupConfig.parse(Map.of("max.delivery.attempts", 0)))
                .hasMessageContaining("max.delivery.attempts");
        assertThatThrownBy(() -> ShareGroupConfig.parse(Map.of("colour", "red"))).hasMessageContaining("colour");
        assertThatThrownBy(() -> shares.configure("g", new ShareGroupConfig("earliest", 5, 0, "missing")))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.INVALID_CONFIG));
        assertThat(shares.describe("g")).isEmpty();
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, null));
        produce(1, 2);
        LeasedRecord l = shares.lease("g", "t", 1, 60_000).get(0);
        assertThat(shares.delete("g")).isTrue();
        assertThat(shares.describe("g")).isEmpty();
        assertThat(shares.delete("g")).isFalse();
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, null));
        assertThat(shares.lease("g", "t", 10, 60_000)).hasSize(2);
        assertThat(shares.acknowledge("g", "t", List.of(new Ack(l.lease(), AckType.ACCEPT))))
                .as("a lease of the deleted group's incarnation").noneMatch(AckResult::ok);
    }

    @Test
    void theWindowBoundsTheRecordsInFlight() {
        ShareGroups shares = new ShareGroups(dir, ingest.topics(), new HotShareRecords(dir), ingest, clock, 3,
                Duration.ZERO, ShareMeters.NONE);
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, null));
        produce(0, 10);
        List<LeasedRecord> got = shares.lease("g", "t", 100, 60_000);
        assertThat(got).extracting(r -> r.record().offset()).containsExactly(0L, 1L, 2L);
        // Accepting a record above an unfinished one does not move the window.
        shares.acknowledge("g", "t", List.of(new Ack(got.get(2).lease(), AckType.ACCEPT)));
        assertThat(shares.lease("g", "t", 100, 60_000)).isEmpty();
        shares.acknowledge("g", "t", List.of(new Ack(got.get(0).lease(), AckType.ACCEPT)));
        assertThat(shares.lease("g", "t", 100, 60_000)).extracting(r -> r.record().offset()).containsExactly(3L);
    }

    /**
     * A lease writer (the service's renders from stored batches) that finds a granted record gone (compaction,
     * retention) leaves it out: it is passed over as done, not held as leased, and never delivered again; the others
     * stay leased under the leases the writer got.
     */
    @Test
    void recordsTheWriterFindsGoneArePassedOverAndTheRestStayLeased() {
        ShareGroups shares = open(clock);
        shares.configure("g", new ShareGroupConfig("earliest", 5, 0, null));
        produce(0, 3);
        List<String> written = new ArrayList<>();
        ShareGroups.Delivered got = shares.leaseOrWake("g", "t", 10, 60_000, (grants, gone) -> {
            assertThat(grants.tp()).isEqualTo(new TopicPartition("t", 0));
            for (int i = 0; i < grants.size(); i++) {
                if (grants.offset(i) == 1) {
                    gone.set(i);
                } else {
                    written.add(grants.lease(i));
                }
            }
            return 1;
        });
        assertThat(got.records()).isEqualTo(2);
        assertThat(written).hasSize(2);
        var partition = shares.describe("g").orElseThrow().topics().get(0).partitions().get(0);
        assertThat(partition.leased()).as("offset 1 passed over, not leased").isEqualTo(2);
        assertThat(partition.lag()).isEqualTo(2);
        clock.advanceMillis(60_000);
        assertThat(shares.lease("g", "t", 10, 60_000)).extracting(r -> r.record().offset())
                .as("after the leases ran out").containsExactly(0L, 2L);
    }

    /**
     * Eight threads and two ShareGroups (as two processes would; the state is only in the files) drain 400 records,
     * releasing some: every record is accepted exactly once, and no two leases of one record overlap in time.
     */
    @Test
    void concurrentWorkersAcceptEveryRecordOnceAndNeverHoldARecordTogether() throws Exception {
        Clock real = Clock.systemUTC();
        ShareGroups a = open(real);
        ShareGroups b = open(real);
        a.configure("g", new ShareGroupConfig("earliest", 100, 0, null));
        produce(0, 200);
        produce(1, 200);
        Map<String, AtomicInteger> accepted = new ConcurrentHashMap<>();
        Map<String, Boolean> held = new ConcurrentHashMap<>();
        AtomicInteger overlaps = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> workers = new ArrayList<>();
        for (int w = 0; w < 8; w++) {
            ShareGroups shares = w % 2 == 0 ? a : b;
            workers.add(pool.submit(() -> {
                int idle = 0;
                while (idle < 3) {
                    List<LeasedRecord> got = shares.lease("g", "t", 5, 60_000);
                    idle = got.isEmpty() ? idle + 1 : 0;
                    for (LeasedRecord l : got) {
                        String id = l.partition() + "@" + l.record().offset();
                        if (held.putIfAbsent(id, true) != null) {
                            overlaps.incrementAndGet();
                        }
                        boolean release = ThreadLocalRandom.current().nextInt(5) == 0;
                        held.remove(id); // before the ack: after it, someone else may lease it at once
                        AckResult r = shares.acknowledge("g", "t",
                                List.of(new Ack(l.lease(), release ? AckType.RELEASE : AckType.ACCEPT))).get(0);
                        assertThat(r.ok()).isTrue();
                        if (!release) {
                            accepted.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : workers) {
            f.get();
        }
        pool.shutdown();
        assertThat(overlaps.get()).isZero();
        assertThat(accepted).hasSize(400);
        assertThat(accepted.values()).allMatch(n -> n.get() == 1);
        assertThat(a.describe("g").orElseThrow().topics().get(0).partitions())
                .allMatch(p -> p.startOffset() == 200 && p.lag() == 0);
    }

    private List<LogRecord> deadLetters() {
        HotShareRecords reads = new HotShareRecords(dir);
        List<LogRecord> out = new ArrayList<>();
        for (int q = 0; q < 2; q++) {
            out.addAll(reads.read(new TopicPartition("dlq", q), 0, 1000));
        }
        return out;
    }
}
