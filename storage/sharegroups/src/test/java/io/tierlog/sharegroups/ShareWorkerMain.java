package io.tierlog.sharegroups;

import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.log.FsyncPolicy;

import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A share-group worker process for {@link ShareGroupsMultiProcessTest}: leases records of topic "t" for group "g",
 * and accepts, releases, rejects or forgets each, or each run of a lease by its range lease (forgotten ones come back
 * when their lease runs out), writing an
 * audit line per lease answer, per acknowledgement sent and per acknowledgement answer, flushed at once. Exits when the group has no lag.
 * Args: data dir, audit file, seed.
 */
public final class ShareWorkerMain {
    static final long LEASE_MS = 400;

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long seed = Long.parseLong(args[2]);
        try (PrintStream audit = new PrintStream(new FileOutputStream(args[1], true), true);
             IngestService ingest = new IngestService(new IngestConfig(dir, FsyncPolicy.ALWAYS, Duration.ofSeconds(1),
                     1 << 20), Clock.systemUTC(), 11)) {
            ShareGroups shares = new ShareGroups(dir, ingest.topics(), new HotShareRecords(dir), ingest,
                    Clock.systemUTC(), 50, Duration.ZERO, ShareMeters.NONE);
            // Two threads per process: a thread waiting for one share-partition's lock while another holds a second
            // one is what makes the kernel's per-process deadlock detection fire (see LockedStateFile).
            ExecutorService threads = Executors.newFixedThreadPool(2);
            List<Future<?>> loops = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Random rnd = new Random(seed * 31 + t);
                loops.add(threads.submit(() -> {
                    work(shares, audit, rnd);
                    return null;
                }));
            }
            try {
                for (Future<?> f : loops) {
                    f.get(); // a failed loop fails the process (exit status 1)
                }
            } finally {
                threads.shutdownNow(); // its idle threads would keep a failed process alive
            }
        }
    }

    private static void work(ShareGroups shares, PrintStream audit, Random rnd) throws InterruptedException {
        while (true) {
            ShareGroups.Leased leased = shares.leaseOrWake("g", "t", 1 + rnd.nextInt(3), LEASE_MS);
            List<LeasedRecord> got = leased.records();
            if (got.isEmpty()) {
                long lag = shares.describe("g").orElseThrow().topics().stream()
                        .flatMap(t -> t.partitions().stream()).mapToLong(ShareDescription.Partition::lag).sum();
                if (lag == 0) {
                    return;
                }
                Thread.sleep(20); // a client's backoff, not a test's synchronisation
                continue;
            }
            for (LeasedRecord l : got) {
                audit.println("L " + l.partition() + " " + l.record().offset() + " " + l.deliveryCount() + " "
                        + l.leaseUntilMs());
            }
            if (rnd.nextInt(3) == 0) {
                // By range leases (ADR 0042): one ack per run, audited per record with the run's one answer.
                for (LeasedRange range : leased.ranges()) {
                    AckType type = type(rnd);
                    if (type == null) {
                        continue;
                    }
                    for (long o = range.firstOffset(); o <= range.lastOffset(); o++) {
                        audit.println("T " + range.partition() + " " + o + " " + range.deliveryCount() + " " + type
                                + " sent");
                    }
                    AckResult r = shares.acknowledge("g", "t", List.of(new Ack(range.lease(), type))).get(0);
                    for (long o = range.firstOffset(); o <= range.lastOffset(); o++) {
                        audit.println("A " + range.partition() + " " + o + " " + range.deliveryCount() + " " + type
                                + " " + r.ok());
                    }
                }
                continue;
            }
            for (LeasedRecord l : got) {
                int roll = rnd.nextInt(100);
                AckType type = roll < 70 ? AckType.ACCEPT : roll < 85 ? AckType.RELEASE : roll < 90 ? AckType.REJECT
                        : null;
                if (type == null) {
                    continue; // forgotten: the lease runs out
                }
                // Written before the ack, so a worker killed between its ack and the answer's line leaves a trace.
                audit.println("T " + l.partition() + " " + l.record().offset() + " " + l.deliveryCount() + " " + type
                        + " sent");
                AckResult r = shares.acknowledge("g", "t", List.of(new Ack(l.lease(), type))).get(0);
                audit.println("A " + l.partition() + " " + l.record().offset() + " " + l.deliveryCount() + " "
                        + type + " " + r.ok());
            }
        }
    }

    /** Accept, release, reject or forget (null), at random. */
    private static AckType type(Random rnd) {
        int roll = rnd.nextInt(100);
        return roll < 70 ? AckType.ACCEPT : roll < 85 ? AckType.RELEASE : roll < 90 ? AckType.REJECT : null;
    }
}
