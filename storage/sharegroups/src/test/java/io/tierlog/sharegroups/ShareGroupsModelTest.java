package io.tierlog.sharegroups;

import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.Partitioner;
import io.tierlog.ingest.ProduceRecord;
import io.tierlog.ingest.ProduceRequest;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Model-based test: seeded random sequences of lease, acks (accept, release, reject, renew, stale ones included; per
 * record or by range lease, narrowed or not, all or nothing),
 * time passing, appends, describes and crashes (the {@link ShareGroups} object dropped and a new one opened on the
 * same files), each call through one of two instances on the same files (as two processes) against a plain in-memory model of the semantics. Checked on every step: a lease hands out exactly as
 * many records as the model has leasable, each one leasable in the model (so never one held by someone else, never
 * an accepted or archived one), with the model's delivery count and the produced content; every ack answers as the
 * model says; describe matches the model. At the end every record archived while a dead-letter topic is set is in
 * the dead-letter topic exactly once, with the headers and reason the model expects.
 */
class ShareGroupsModelTest {
    private static final int RUNS = Integer.getInteger("sharegroups.model.runs", 2000);
    private static final String[] TYPES = {"accept", "release", "reject", "renew"};

    @Test
    void randomHistoriesMatchTheModel() throws IOException {
        Path base = Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        for (int seed = 0; seed < RUNS; seed++) {
            Path dir = Files.createTempDirectory(base, "sharegroups-model-");
            try {
                new Run(seed, dir).run();
            } catch (AssertionError e) {
                throw new AssertionError("seed " + seed + ": " + e.getMessage(), e);
            } finally {
                deleteTree(dir);
            }
        }
    }

    enum St { AVAILABLE, LEASED, ACCEPTED, ARCHIVED }

    static final class Rec {
        St st = St.AVAILABLE;
        int dc;
        long leaseUntil;
        long leaseMs;
        long availableAt;
        String reason;
        byte[] key;
        byte[] value;

        boolean done() {
            return st == St.ACCEPTED || st == St.ARCHIVED;
        }
    }

    static final class Run {
        final Random rnd;
        final Path dir;
        final ManualClock clock = new ManualClock(1_000_000);
        final int partitions;
        final int maxInFlight;
        final long grace;
        final ShareGroupConfig config;
        /** Half the runs take a snapshot every few commits, so replays across snapshots are covered too. */
        final long minCompactBytes;
        final Map<Integer, List<Rec>> model = new HashMap<>();
        final List<LeasedRecord> issued = new ArrayList<>();
        /** The range leases handed out beside the records (ADR 0042). */
        final List<LeasedRange> issuedRanges = new ArrayList<>();
        final StringBuilder log = new StringBuilder();
        IngestService ingest;
        ShareGroups shares;
        /** A second instance on the same files, as a second process would be: each call goes to one at random. */
        ShareGroups other;

        Run(int seed, Path dir) {
            this.rnd = new Random(seed);
            this.dir = dir;
            partitions = 1 + rnd.nextInt(3);
            maxInFlight = 1 + rnd.nextInt(8);
            grace = rnd.nextBoolean() ? 0 : 5;
            config = new ShareGroupConfig("earliest", 1 + rnd.nextInt(4), rnd.nextBoolean() ? 0 : rnd.nextInt(50),
                    "dlq");
            minCompactBytes = rnd.nextBoolean() ? 0 : ShareStateLog.MIN_COMPACT_BYTES;
        }

        void run() {
            ingest = new IngestService(new IngestConfig(dir, FsyncPolicy.NEVER, Duration.ofSeconds(1), 1 << 20), clock, 7);
            try {
                ingest.topics().create("t", partitions, TopicConfig.DEFAULTS);
                ingest.topics().create("dlq", 2, TopicConfig.DEFAULTS);
                for (int p = 0; p < partitions; p++) {
                    model.put(p, new ArrayList<>());
                }
                open();
                shares.configure("g", config);
                append(5 + rnd.nextInt(10));
                int steps = 20 + rnd.nextInt(60);
                for (int i = 0; i < steps; i++) {
                    int op = rnd.nextInt(100);
                    if (op < 35) {
                        lease(1 + rnd.nextInt(6));
                    } else if (op < 70) {
                        ack();
                    } else if (op < 82) {
                        long ms = rnd.nextInt(150);
                        clock.advanceMillis(ms);
                        log.append("advance ").append(ms).append('\n');
                    } else if (op < 88) {
                        // Both instances die (maybe one mid-append), or a third process dies mid-append while both
                        // keep the state they cached.
                        int how = rnd.nextInt(3);
                        log.append(how == 2 ? "a third process dies\n" : "crash\n");
                        if (how > 0) {
                            tearTail();
                        }
                        if (how < 2) {
                            open();
                        }
                    } else if (op < 93) {
                        append(1 + rnd.nextInt(4));
                    } else {
                        describe();
                    }
                }
                // Settle everything: leases run out, every partition is visited, pending dead letters are produced.
                clock.advanceMillis(1_000_000);
                lease(Integer.MAX_VALUE);
                describe();
                checkDeadLetters();
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\nhistory:\n" + log, e);
            } finally {
                ingest.close();
            }
        }

        void open() {
            shares = new ShareGroups(dir, ingest.topics(), new HotShareRecords(dir), ingest, clock, maxInFlight,
                    Duration.ofMillis(grace), ShareMeters.NONE, FsyncPolicy.ALWAYS, minCompactBytes);
            other = new ShareGroups(dir, ingest.topics(), new HotShareRecords(dir), ingest, clock, maxInFlight,
                    Duration.ofMillis(grace), ShareMeters.NONE, FsyncPolicy.ALWAYS, minCompactBytes);
        }

        /**
         * As if the crashed process died in the middle of appending to a share-partition's state log: part of a
         * frame at its end (that frame was never answered, so the model does not have it). Every later change must
         * still be read: a writer that appended after the torn bytes would leave its frame unread.
         */
        void tearTail() {
            int p = rnd.nextInt(partitions);
            Path file = dir.resolve("__share_groups").resolve("g").resolve("t").resolve(p + ".json");
            if (!Files.exists(file)) {
                return;
            }
            byte[] torn = new byte[4 + 4 + rnd.nextInt(60)];
            rnd.nextBytes(torn);
            // A length beyond what follows (cut short), or one that fits with a CRC that does not match.
            java.nio.ByteBuffer.wrap(torn).putInt(0, rnd.nextBoolean() ? 1000 + rnd.nextInt(1000) : torn.length - 8);
            try {
                Files.write(file, torn, java.nio.file.StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            log.append("torn tail of ").append(torn.length).append(" bytes on partition ").append(p).append('\n');
        }

        /** Either instance: one that cached a state the other has changed since must not act on the stale copy. */
        ShareGroups any() {
            return rnd.nextInt(3) == 0 ? other : shares;
        }

        void append(int n) {
            int p = rnd.nextInt(partitions);
            List<ProduceRecord> rs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Rec r = new Rec();
                r.key = rnd.nextInt(4) == 0 ? null : ("k" + rnd.nextInt(10)).getBytes(StandardCharsets.UTF_8);
                r.value = ("v" + p + "-" + model.get(p).size()).getBytes(StandardCharsets.UTF_8);
                model.get(p).add(r);
                rs.add(new ProduceRecord(r.key, r.value, List.of(new Header("h", new byte[]{1})), p, null));
            }
            ingest.produce("t", new ProduceRequest(rs, Optional.empty()));
            log.append("append ").append(n).append(" to ").append(p).append('\n');
        }

        /** The model's settle: leases that ran out `grace` ago end; at the delivery limit the record is archived. */
        void settle() {
            long now = clock.millis();
            for (List<Rec> recs : model.values()) {
                for (Rec r : recs) {
                    if (r.st == St.LEASED && now >= r.leaseUntil + grace) {
                        release(r, r.leaseUntil);
                    }
                }
            }
        }

        void release(Rec r, long availableAt) {
            if (r.dc >= config.maxDeliveryAttempts()) {
                r.st = St.ARCHIVED;
                r.reason = "max-delivery-attempts";
            } else {
                r.st = St.AVAILABLE;
                r.availableAt = availableAt;
            }
        }

        long start(int p) {
            List<Rec> recs = model.get(p);
            for (int o = 0; o < recs.size(); o++) {
                if (!recs.get(o).done()) {
                    return o;
                }
            }
            return recs.size();
        }

        boolean leasable(int p, long offset) {
            Rec r = model.get(p).get((int) offset);
            return r.st == St.AVAILABLE && clock.millis() >= r.availableAt && offset < start(p) + maxInFlight;
        }

        void lease(int max) {
            settle();
            long leaseMs = 10 + rnd.nextInt(90);
            int leasable = 0;
            for (int p = 0; p < partitions; p++) {
                for (int o = 0; o < model.get(p).size(); o++) {
                    leasable += leasable(p, o) ? 1 : 0;
                }
            }
            ShareGroups.Leased leased = any().leaseOrWake("g", "t", max, leaseMs);
            List<LeasedRecord> got = leased.records();
            log.append("lease max=").append(max == Integer.MAX_VALUE ? "all" : max).append(" ms=").append(leaseMs)
                    .append(" -> ");
            got.forEach(l -> log.append(l.partition()).append('@').append(l.record().offset()).append('#')
                    .append(l.deliveryCount()).append(' '));
            log.append('\n');
            assertThat(got).as("records leased").hasSize(Math.min(max, leasable));
            for (LeasedRecord l : got) {
                long offset = l.record().offset();
                assertThat(leasable(l.partition(), offset))
                        .as("%d@%d is leasable in the model (not held, not done, in the window)", l.partition(), offset)
                        .isTrue();
                Rec r = model.get(l.partition()).get((int) offset);
                r.st = St.LEASED;
                r.dc++;
                r.leaseMs = leaseMs;
                r.leaseUntil = clock.millis() + leaseMs;
                assertThat(l.deliveryCount()).as("delivery count of %d@%d", l.partition(), offset).isEqualTo(r.dc);
                assertThat(l.record().value()).isEqualTo(r.value);
                assertThat(l.record().key()).isEqualTo(r.key);
                issued.add(l);
            }
            // The ranges name exactly the records leased, each run consecutive with one delivery count.
            java.util.Set<String> covered = new java.util.HashSet<>();
            for (LeasedRange range : leased.ranges()) {
                assertThat(RangeLease.decode(range.lease())).get().satisfies(id -> {
                    assertThat(id.firstOffset()).isEqualTo(range.firstOffset());
                    assertThat(id.lastOffset()).isEqualTo(range.lastOffset());
                    assertThat(id.deliveryCount()).isEqualTo(range.deliveryCount());
                });
                for (long o = range.firstOffset(); o <= range.lastOffset(); o++) {
                    assertThat(covered.add(range.partition() + "@" + o)).as("%d@%d in one range", range.partition(), o)
                            .isTrue();
                    Rec r = model.get(range.partition()).get((int) o);
                    assertThat(r.dc).as("delivery count of %d@%d in its range", range.partition(), o)
                            .isEqualTo(range.deliveryCount());
                }
                issuedRanges.add(range);
            }
            java.util.Set<String> leasedNow = new java.util.HashSet<>();
            got.forEach(l -> leasedNow.add(l.partition() + "@" + l.record().offset()));
            assertThat(covered).as("the ranges cover the records leased").isEqualTo(leasedNow);
        }

        /** One entry of an acks request as the model sees it: a run of one partition under one delivery count. */
        record Entry(String lease, int partition, long first, long last, int dc, Long narrowFirst, Long narrowLast) {
        }

        void ack() {
            if (issued.isEmpty()) {
                return;
            }
            settle();
            int n = 1 + rnd.nextInt(3);
            List<Ack> acks = new ArrayList<>();
            List<Entry> which = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                AckType type = AckType.parse(TYPES[rnd.nextInt(TYPES.length)]);
                if (!issuedRanges.isEmpty() && rnd.nextBoolean()) {
                    // A range lease, mostly recent, sometimes old; sometimes narrowed.
                    int idx = rnd.nextInt(4) == 0 ? rnd.nextInt(issuedRanges.size())
                            : Math.max(0, issuedRanges.size() - 1 - rnd.nextInt(Math.min(issuedRanges.size(), 4)));
                    LeasedRange l = issuedRanges.get(idx);
                    long first = l.firstOffset();
                    long last = l.lastOffset();
                    Long nf = null;
                    Long nl = null;
                    if (rnd.nextInt(3) == 0) {
                        nf = first + rnd.nextInt((int) (last - first + 1));
                        first = nf;
                    }
                    if (rnd.nextInt(3) == 0) {
                        nl = first + rnd.nextInt((int) (last - first + 1));
                        last = nl;
                    }
                    which.add(new Entry(l.lease(), l.partition(), first, last, l.deliveryCount(), nf, nl));
                    acks.add(new Ack(l.lease(), type, nf, nl));
                } else {
                    // Mostly recent leases, sometimes old (stale) ones.
                    int idx = rnd.nextInt(4) == 0 ? rnd.nextInt(issued.size())
                            : Math.max(0, issued.size() - 1 - rnd.nextInt(Math.min(issued.size(), 6)));
                    LeasedRecord l = issued.get(idx);
                    long o = l.record().offset();
                    which.add(new Entry(l.lease(), l.partition(), o, o, l.deliveryCount(), null, null));
                    acks.add(new Ack(l.lease(), type));
                }
            }
            List<AckResult> results = any().acknowledge("g", "t", acks);
            assertThat(results).hasSize(n);
            long now = clock.millis();
            for (int i = 0; i < n; i++) {
                Entry e = which.get(i);
                List<Rec> run = model.get(e.partition()).subList((int) e.first(), (int) e.last() + 1);
                boolean valid = run.stream().allMatch(r -> r.st == St.LEASED && r.dc == e.dc() && now < r.leaseUntil);
                log.append("ack ").append(acks.get(i).type()).append(' ').append(e.partition()).append('@')
                        .append(e.first()).append("..").append(e.last()).append('#').append(e.dc()).append(" -> ")
                        .append(results.get(i).ok()).append('\n');
                assertThat(results.get(i).lease()).isEqualTo(e.lease());
                assertThat(results.get(i).firstOffset()).isEqualTo(e.narrowFirst());
                assertThat(results.get(i).lastOffset()).isEqualTo(e.narrowLast());
                assertThat(results.get(i).ok()).as("ack %s of %d@%d..%d#%d", acks.get(i).type(), e.partition(),
                        e.first(), e.last(), e.dc()).isEqualTo(valid);
                if (!valid) {
                    assertThat(results.get(i).error()).isEqualTo("lease-expired");
                    continue;
                }
                for (Rec r : run) {
                    switch (acks.get(i).type()) {
                        case ACCEPT -> r.st = St.ACCEPTED;
                        case RENEW -> r.leaseUntil = now + r.leaseMs;
                        case RELEASE -> release(r, now + config.redeliveryDelayMs());
                        case REJECT -> {
                            r.st = St.ARCHIVED;
                            r.reason = "rejected";
                        }
                    }
                }
            }
        }

        void describe() {
            settle();
            ShareDescription d = shares.describe("g").orElseThrow();
            assertThat(d.config()).isEqualTo(config);
            Map<Integer, ShareDescription.Partition> seen = new HashMap<>();
            d.topics().stream().filter(t -> t.topic().equals("t")).flatMap(t -> t.partitions().stream())
                    .forEach(p -> seen.put(p.partition(), p));
            for (int p = 0; p < partitions; p++) {
                List<Rec> recs = model.get(p);
                ShareDescription.Partition got = seen.get(p);
                if (got == null) {
                    assertThat(recs).as("partition %d has no state, so nothing was delivered", p)
                            .allMatch(r -> r.dc == 0);
                    continue;
                }
                long available = recs.stream().filter(r -> r.st == St.AVAILABLE && r.dc > 0).count();
                long leased = recs.stream().filter(r -> r.st == St.LEASED).count();
                long lag = recs.stream().filter(r -> !r.done()).count();
                assertThat(got.startOffset()).as("startOffset of %d", p).isEqualTo(start(p));
                assertThat(got.available()).as("available of %d", p).isEqualTo(available);
                assertThat(got.leased()).as("leased of %d", p).isEqualTo(leased);
                assertThat(got.lag()).as("lag of %d", p).isEqualTo(lag);
            }
        }

        void checkDeadLetters() {
            Map<String, LogRecord> byOrigin = new HashMap<>();
            for (int q = 0; q < 2; q++) {
                TopicPartition tp = new TopicPartition("dlq", q);
                HotShareRecords reads = new HotShareRecords(dir);
                for (LogRecord r : reads.read(tp, 0, 100_000)) {
                    Map<String, String> h = headers(r);
                    assertThat(h.get("tierlog.dlq.topic")).isEqualTo("t");
                    String origin = h.get("tierlog.dlq.partition") + "@" + h.get("tierlog.dlq.offset");
                    assertThat(byOrigin.put(origin, r)).as("dead letter %s appears once", origin).isNull();
                    if (r.key() != null) {
                        assertThat(q).as("the key picks the dead-letter partition").isEqualTo(Partitioner.forKey(r.key(), 2));
                    }
                }
            }
            int archived = 0;
            for (int p = 0; p < partitions; p++) {
                List<Rec> recs = model.get(p);
                for (int o = 0; o < recs.size(); o++) {
                    Rec r = recs.get(o);
                    LogRecord dl = byOrigin.get(p + "@" + o);
                    if (r.st != St.ARCHIVED) {
                        assertThat(dl).as("%d@%d is not archived, so not a dead letter", p, o).isNull();
                        continue;
                    }
                    archived++;
                    if (dl == null) {
                        fail("archived record " + p + "@" + o + " (" + r.reason + ") is not in the dead-letter topic");
                    }
                    Map<String, String> h = headers(dl);
                    assertThat(h.get("tierlog.dlq.reason")).as("reason of %d@%d", p, o).isEqualTo(r.reason);
                    assertThat(h.get("tierlog.dlq.delivery-count")).isEqualTo(Integer.toString(r.dc));
                    assertThat(h.get("h")).isEqualTo("\u0001");
                    assertThat(dl.value()).isEqualTo(r.value);
                    assertThat(dl.key()).isEqualTo(r.key);
                }
            }
            assertThat(byOrigin).hasSize(archived);
        }
    }

    static Map<String, String> headers(LogRecord r) {
        Map<String, String> h = new HashMap<>();
        for (Header x : r.headers()) {
            h.put(x.name(), new String(x.value(), StandardCharsets.UTF_8));
        }
        return h;
    }

    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
