package io.tierlog.service.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three consumers (threads of this JVM, each following docs/consumer-groups.md's loop over HTTP) share a
 * 12-partition topic through the packaged service, reading records and committing after each batch with their
 * member id and epoch. One is killed mid-way (it stops dead: no commit of what it read last, no leave). The two
 * others take over its partitions and resume each from the offset it last committed; from the ownership intervals
 * (every heartbeat answer, on this JVM's monotonic clock, ending at a consumer's lease) no partition ever had two
 * owners; no acknowledged commit was lost; every record was processed, and only records at or after the dead
 * consumer's last commit were processed twice. Logs stay under {@code target/it/group-kill}.
 */
class GroupKillResumeIT {
    static final Duration STARTUP = Duration.ofSeconds(120);
    static final long SESSION_MS = 6_000;
    static final int PARTITIONS = 12;
    static final int RECORDS = 200;
    static final String TOPIC = "jobs";
    static final String GROUP = "workers";
    static final ObjectMapper JSON = new ObjectMapper();

    private final Path work = Path.of("target", "it", "group-kill").toAbsolutePath();

    record Processed(int consumer, int partition, long offset) {
    }

    /** An acknowledged (204) commit: the group's offset for the partition was then {@code offset}. */
    record Commit(int consumer, int partition, long offset, long atNanos) {
    }

    final class Consumer extends Thread {
        final int index;
        final PackagedService service;
        final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        final Ownership ownership;
        final List<Processed> processed;
        final List<Commit> commits;
        /** Where each newly owned partition started: the committed offset read when it was granted. */
        final Map<Integer, List<Long>> startedAt = new ConcurrentHashMap<>();
        volatile boolean running = true;
        volatile boolean killed;
        volatile Throwable failure;
        private final long[] position = new long[PARTITIONS];
        private String memberId;
        private int epoch;
        private long nextHeartbeat;

        Consumer(int index, PackagedService service, Ownership.Ledger ledger, List<Processed> processed,
                 List<Commit> commits) {
            this.index = index;
            this.service = service;
            this.ownership = new Ownership(index, SESSION_MS, ledger);
            this.processed = processed;
            this.commits = commits;
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (running && !killed) {
                    if (System.nanoTime() >= nextHeartbeat) {
                        heartbeat();
                    }
                    if (ownership.leaseRanOut(System.nanoTime())) {
                        ownership.releaseAll(System.nanoTime()); // lease ran out: stop, rejoin
                        epoch = 0;
                        continue;
                    }
                    for (int p : new TreeSet<>(ownership.owned())) {
                        if (killed) {
                            break;
                        }
                        consume(p);
                    }
                    Thread.sleep(50); // the application's pace between polls
                }
                if (killed) {
                    ownership.releaseAll(System.nanoTime()); // dead: it consumes nothing from here on
                } else if (memberId != null) {
                    service.send(http, "POST", "/v1/groups/" + GROUP + "/heartbeat",
                            "{\"memberId\":\"" + memberId + "\",\"memberEpoch\":-1}");
                    ownership.releaseAll(System.nanoTime());
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        /** Reads up to 2 records from the position, processes them, commits the new position (one batch). */
        private void consume(int p) throws Exception {
            HttpResponse<String> r = service.send(http, "GET", "/v1/topics/" + TOPIC + "/partitions/" + p
                    + "/records?offset=" + position[p] + "&maxRecords=2", null);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode records = JSON.readTree(r.body()).get("records");
            if (records.isEmpty() || killed) {
                return;
            }
            for (JsonNode rec : records) {
                long offset = rec.get("offset").asLong();
                processed.add(new Processed(index, p, offset));
                position[p] = offset + 1;
            }
            if (killed) {
                return; // killed between processing and committing: the batch is processed, not committed
            }
            HttpResponse<String> c = service.send(http, "PUT", "/v1/groups/" + GROUP + "/offsets", "{\"memberId\":\""
                    + memberId + "\",\"memberEpoch\":" + epoch + ",\"offsets\":[{\"topic\":\"" + TOPIC
                    + "\",\"partition\":" + p + ",\"offset\":" + position[p] + "}]}");
            if (c.statusCode() == 204) {
                commits.add(new Commit(index, p, position[p], System.nanoTime()));
            } else {
                // the epoch moved on (a revocation or grant): the next heartbeat says what is still ours
                assertThat(c.statusCode()).as(c.body()).isIn(404, 409);
                nextHeartbeat = 0;
            }
        }

        private void heartbeat() throws Exception {
            long sent = System.nanoTime();
            String body = "{\"memberId\":" + (memberId == null ? "null" : "\"" + memberId + "\"") + ",\"memberEpoch\":"
                    + epoch + ",\"topics\":[\"" + TOPIC + "\"],\"sessionTimeoutMs\":" + SESSION_MS
                    + ",\"ownedPartitions\":[{\"topic\":\"" + TOPIC + "\",\"partitions\":" + new TreeSet<>(ownership.owned()) + "}],"
                    + "\"clientId\":\"c" + index + "\"}";
            HttpResponse<String> r = service.send(http, "POST", "/v1/groups/" + GROUP + "/heartbeat", body);
            long received = System.nanoTime();
            JsonNode a = JSON.readTree(r.body());
            if (r.statusCode() != 200) {
                assertThat(r.statusCode()).as(r.body()).isIn(404, 409);
                ownership.releaseAll(received);
                if (r.statusCode() == 404) {
                    memberId = null;
                }
                epoch = 0;
                nextHeartbeat = 0;
                return;
            }
            Set<Integer> now = new TreeSet<>();
            a.get("assignment").forEach(tps -> tps.get("partitions").forEach(p -> now.add(p.asInt())));
            // every batch was committed as it was read: a revoked partition is given up as it stands
            boolean gaveUp = !now.containsAll(ownership.owned());
            Set<Integer> added = new TreeSet<>(now);
            added.removeAll(ownership.owned());
            if (!added.isEmpty()) { // positioned before they count as owned, which the test thread watches
                Map<Integer, Long> committed = committedOffsets();
                for (int p : added) {
                    position[p] = committed.getOrDefault(p, 0L);
                    startedAt.computeIfAbsent(p, k -> new CopyOnWriteArrayList<>()).add(position[p]);
                }
            }
            ownership.answered(now, sent, received);
            memberId = a.get("memberId").asText();
            epoch = a.get("memberEpoch").asInt();
            // heartbeat at once after giving partitions up (docs/consumer-groups.md), else when asked
            nextHeartbeat = !gaveUp ? received + a.get("heartbeatIntervalMs").asLong() * 1_000_000 : 0;
        }

        private Map<Integer, Long> committedOffsets() throws Exception {
            HttpResponse<String> r = service.send(http, "GET", "/v1/groups/" + GROUP + "/offsets", null);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            Map<Integer, Long> out = new HashMap<>();
            JSON.readTree(r.body()).get("offsets").forEach(o -> out.put(o.get("partition").asInt(), o.get("offset").asLong()));
            return out;
        }
    }

    @Test
    void twoSurvivorsResumeAKilledConsumersPartitionsFromItsLastCommits() throws Exception {
        PackagedService.deleteTree(work);
        Files.createDirectories(work.resolve("a"));
        PackagedService service = PackagedService.start(work.resolve("a"), work.resolve("hot"));
        List<Consumer> consumers = new ArrayList<>();
        try {
            service.awaitReady(STARTUP);
            HttpClient http = HttpClient.newHttpClient();
            assertThat(service.send(http, "POST", "/v1/topics", "{\"name\":\"" + TOPIC + "\",\"partitions\":"
                    + PARTITIONS + "}").statusCode()).isEqualTo(201);
            StringBuilder produce = new StringBuilder("{\"records\":[");
            for (int p = 0; p < PARTITIONS; p++) {
                for (int i = 0; i < RECORDS; i++) {
                    produce.append(p + i == 0 ? "" : ",").append("{\"partition\":").append(p).append(",\"value\":")
                            .append(i).append('}');
                }
            }
            HttpResponse<String> produced = service.send(http, "POST", "/v1/topics/" + TOPIC + "/records",
                    produce.append("]}").toString());
            assertThat(produced.statusCode()).as(produced.body()).isEqualTo(200);

            Ownership.Ledger ledger = new Ownership.Ledger();
            List<Processed> processed = new CopyOnWriteArrayList<>();
            List<Commit> commits = new CopyOnWriteArrayList<>();
            for (int i = 0; i < 3; i++) {
                Consumer c = new Consumer(i, service, ledger, processed, commits);
                consumers.add(c);
                c.start();
            }
            awaitOwned(consumers, 4, 60);

            // Kill the consumer that owns partition 0 once it has committed some of each of its partitions.
            Consumer dead = consumers.stream().filter(c -> c.ownership.owned().contains(0)).findFirst().orElseThrow();
            Set<Integer> orphans = dead.ownership.owned();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (!orphans.stream().allMatch(p -> commits.stream().anyMatch(c -> c.consumer() == dead.index
                    && c.partition() == p && c.offset() >= 4))) {
                assertThat(System.nanoTime()).as("the victim commits some of each partition").isLessThan(deadline);
                Thread.sleep(20);
            }
            List<Consumer> survivors = consumers.stream().filter(c -> c != dead).toList();
            Map<Integer, Set<Integer>> before = new HashMap<>();
            survivors.forEach(s -> before.put(s.index, s.ownership.owned()));
            dead.killed = true;
            dead.join(10_000);
            awaitOwned(survivors, 6, 60);
            survivors.forEach(s -> assertThat(s.ownership.owned()).as("survivor %d keeps its own", s.index)
                    .containsAll(before.get(s.index)));

            // each orphan was resumed from the dead consumer's last acknowledged commit of it
            Map<Integer, Long> lastDeadCommit = new HashMap<>();
            commits.stream().filter(c -> c.consumer() == dead.index)
                    .forEach(c -> lastDeadCommit.merge(c.partition(), c.offset(), Math::max));
            for (int p : orphans) {
                Consumer heir = survivors.stream().filter(s -> s.ownership.owned().contains(p)).findFirst().orElseThrow();
                List<Long> starts = heir.startedAt.get(p);
                assertThat(starts).as("partition %d taken over", p).isNotEmpty();
                assertThat(starts.get(starts.size() - 1)).as("partition %d resumed at the dead consumer's last commit", p)
                        .isEqualTo(lastDeadCommit.get(p));
            }

            // the survivors finish everything
            deadline = System.nanoTime() + 120_000_000_000L;
            while (!allCommitted(commits)) {
                assertThat(System.nanoTime()).as("everything committed in time").isLessThan(deadline);
                for (Consumer s : survivors) {
                    assertThat(s.failure).as("consumer %d", s.index).isNull();
                }
                Thread.sleep(50);
            }
            for (Consumer c : survivors) {
                c.running = false;
                c.join(10_000);
                assertThat(c.failure).as("consumer %d", c.index).isNull();
            }
            assertThat(dead.failure).isNull();

            // no acknowledged commit lost: the group's offsets are where the last acknowledged commits put them
            HttpResponse<String> offsets = service.send(http, "GET", "/v1/groups/" + GROUP + "/offsets", null);
            Map<Integer, Long> finalOffsets = new HashMap<>();
            JSON.readTree(offsets.body()).get("offsets")
                    .forEach(o -> finalOffsets.put(o.get("partition").asInt(), o.get("offset").asLong()));
            for (int p = 0; p < PARTITIONS; p++) {
                int partition = p;
                List<Commit> ofP = commits.stream().filter(c -> c.partition() == partition).toList();
                for (int i = 1; i < ofP.size(); i++) {
                    assertThat(ofP.get(i).offset()).as("partition %d: commits never go back", p)
                            .isGreaterThanOrEqualTo(ofP.get(i - 1).offset());
                }
                assertThat(finalOffsets.get(p)).as("partition %d", p).isEqualTo((long) RECORDS);
            }

            // every record processed; twice only at or after the dead consumer's last commit of its partitions
            Map<String, Integer> times = new HashMap<>();
            processed.forEach(x -> times.merge(x.partition() + "/" + x.offset(), 1, Integer::sum));
            for (int p = 0; p < PARTITIONS; p++) {
                for (long o = 0; o < RECORDS; o++) {
                    int n = times.getOrDefault(p + "/" + o, 0);
                    assertThat(n).as("record %d/%d processed", p, o).isPositive();
                    if (n > 1) {
                        assertThat(orphans).as("record %d/%d processed %d times", p, o, n).contains(p);
                        assertThat(o).as("re-processed %d/%d is after the dead's last commit", p, o)
                                .isGreaterThanOrEqualTo(lastDeadCommit.get(p));
                        assertThat(n).isEqualTo(2);
                    }
                }
            }

            // no partition ever had two owners
            ledger.assertNoPartitionHadTwoOwners();
            assertThat(ledger.recorded(dead.index)).isTrue();
        } finally {
            consumers.forEach(c -> c.running = false);
            service.process().destroyForcibly();
        }
    }

    private static boolean allCommitted(List<Commit> commits) {
        Set<Integer> done = new HashSet<>();
        commits.stream().filter(c -> c.offset() == RECORDS).forEach(c -> done.add(c.partition()));
        return done.size() == PARTITIONS;
    }

    private static void awaitOwned(List<Consumer> consumers, int each, int seconds) throws InterruptedException {
        Ownership.awaitEach(consumers.stream().map(c -> c.ownership).toList(), each, seconds, () -> consumers
                .forEach(c -> assertThat(c.failure).as("consumer %d", c.index).isNull()));
    }
}
