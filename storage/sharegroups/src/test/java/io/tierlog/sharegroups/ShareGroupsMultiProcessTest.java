package io.tierlog.sharegroups;

import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.ProduceRecord;
import io.tierlog.ingest.ProduceRequest;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.JavaProcess;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Four worker processes (separate JVMs, so separate file locks; two threads each) share one group on one data dir; they accept,
 * release, reject and forget records at random, and one of them is killed with SIGKILL mid-way. From the audit of
 * every lease and ack answer: each record is accepted exactly once or dead-lettered exactly once (never both), and
 * no record was granted to a second holder before the previous lease ended (by release, or by running out).
 */
@Tag("slow")
class ShareGroupsMultiProcessTest {
    @TempDir
    Path dir;

    @Test
    void workerProcessesDrainATopicExactlyOnceAndNeverHoldARecordTogether() throws Exception {
        Path data = dir.resolve("data");
        int records = 150;
        try (IngestService ingest = new IngestService(new IngestConfig(data, FsyncPolicy.ALWAYS, Duration.ofSeconds(1),
                1 << 20), Clock.systemUTC(), 5)) {
            ingest.topics().create("t", 2, TopicConfig.DEFAULTS);
            ingest.topics().create("dlq", 1, TopicConfig.DEFAULTS);
            List<ProduceRecord> rs = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                rs.add(new ProduceRecord(null, ("job-" + i).getBytes(StandardCharsets.UTF_8), List.of(), i % 2, null));
            }
            ingest.produce("t", new ProduceRequest(rs, Optional.empty()));
            new ShareGroups(data, ingest.topics(), new HotShareRecords(data), ingest, Clock.systemUTC(), 50,
                    Duration.ZERO, ShareMeters.NONE).configure("g", new ShareGroupConfig("earliest", 3, 0, "dlq"));
        }

        List<Process> workers = new ArrayList<>();
        List<Path> audits = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            Path audit = dir.resolve("audit-" + w);
            Files.createFile(audit);
            audits.add(audit);
            workers.add(JavaProcess.startLogged(ShareWorkerMain.class, dir.resolve("worker-" + w + ".log"),
                    data.toString(), audit.toString(), Integer.toString(w)));
        }
        // Kill one worker once it has done some work: its leases must run out and go to the others.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (Files.readAllLines(audits.get(0)).size() < 20 && workers.get(0).isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(50); // polling another process's progress: no latch crosses processes
        }
        workers.get(0).destroyForcibly().waitFor();
        for (int w = 1; w < 4; w++) {
            JavaProcess.awaitSuccess(workers.get(w), 240, dir.resolve("worker-" + w + ".log"));
        }

        Map<String, List<long[]>> leases = new TreeMap<>(); // record -> [deliveryCount, leaseUntil]
        Map<String, List<String>> okAcks = new HashMap<>();   // record#dc -> ok ack types
        java.util.Set<String> unauditedByKilled = new java.util.HashSet<>(); // leased by the killed worker, ack unseen
        java.util.Set<String> releaseSentByKilled = new java.util.HashSet<>(); // its answer may have died with it
        for (Path audit : audits) {
            for (String line : Files.readAllLines(audit)) {
                String[] g = line.split(" ");
                if (audit.equals(audits.get(0)) && g[0].equals("L") && g.length == 5) {
                    unauditedByKilled.add(g[1] + "@" + g[2] + "#" + g[3]);
                } else if (audit.equals(audits.get(0)) && g[0].equals("A") && g.length == 6) {
                    unauditedByKilled.remove(g[1] + "@" + g[2] + "#" + g[3]);
                } else if (audit.equals(audits.get(0)) && g[0].equals("T") && g.length == 6 && g[4].equals("RELEASE")) {
                    releaseSentByKilled.add(g[1] + "@" + g[2] + "#" + g[3]);
                }
                String[] f = line.split(" ");
                if (f[0].equals("L") && f.length == 5) {
                    leases.computeIfAbsent(f[1] + "@" + f[2], k -> new ArrayList<>())
                            .add(new long[]{Long.parseLong(f[3]), Long.parseLong(f[4])});
                } else if (f[0].equals("A") && f.length == 6 && f[5].equals("true")) {
                    okAcks.computeIfAbsent(f[1] + "@" + f[2] + "#" + f[3], k -> new ArrayList<>()).add(f[4]);
                }
            }
        }
        Map<String, Integer> accepted = new HashMap<>();
        for (Map.Entry<String, List<long[]>> e : leases.entrySet()) {
            List<long[]> ls = e.getValue();
            ls.sort((a, b) -> Long.compare(a[0], b[0]));
            for (int k = 0; k < ls.size(); k++) {
                long dc = ls.get(k)[0];
                // Strictly increasing; a gap is a lease granted to the killed worker before it could audit it.
                assertThat(dc).as("%s: delivery numbers grow", e.getKey()).isGreaterThan(k == 0 ? 0 : ls.get(k - 1)[0]);
                List<String> acks = okAcks.getOrDefault(e.getKey() + "#" + dc, List.of());
                assertThat(acks).as("%s#%d: at most one ok ack (no renew here)", e.getKey(), dc).hasSizeLessThanOrEqualTo(1);
                if (acks.contains("ACCEPT")) {
                    accepted.merge(e.getKey(), 1, Integer::sum);
                }
                // A release the killed worker sent may have taken effect without its answer reaching the audit.
                boolean maybeReleased = acks.contains("RELEASE") || releaseSentByKilled.contains(e.getKey() + "#" + dc);
                if (k + 1 < ls.size() && ls.get(k + 1)[0] == dc + 1 && !maybeReleased) {
                    long grantedNext = ls.get(k + 1)[1] - ShareWorkerMain.LEASE_MS;
                    assertThat(grantedNext).as("%s: delivery %d granted only after delivery %d's lease ran out",
                            e.getKey(), dc + 1, dc).isGreaterThanOrEqualTo(ls.get(k)[1]);
                }
            }
        }
        Map<String, Integer> deadLettered = new HashMap<>();
        for (LogRecord r : new HotShareRecords(data).read(new TopicPartition("dlq", 0), 0, 10_000)) {
            Map<String, String> h = ShareGroupsModelTest.headers(r);
            deadLettered.merge(h.get("tierlog.dlq.partition") + "@" + h.get("tierlog.dlq.offset"), 1, Integer::sum);
        }
        assertThat(accepted.values()).as("accepted at most once").allMatch(n -> n == 1);
        assertThat(deadLettered.values()).as("dead-lettered at most once").allMatch(n -> n == 1);
        for (int i = 0; i < records; i++) {
            String id = (i % 2) + "@" + (i / 2);
            assertThat(accepted.containsKey(id) && deadLettered.containsKey(id)).as("%s accepted and dead-lettered", id)
                    .isFalse();
            // The killed worker may have been accepted without living to write it down.
            boolean maybeAcceptedUnseen = unauditedByKilled.stream().anyMatch(x -> x.startsWith(id + "#"));
            assertThat(accepted.containsKey(id) || deadLettered.containsKey(id) || maybeAcceptedUnseen)
                    .as("%s accepted exactly once or dead-lettered exactly once", id).isTrue();
        }
    }
}
