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
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two packaged index-service instances on one hot volume serve one consumer group. Three consumers (threads here,
 * each heartbeating to the instances in turn, and to the other one when one does not answer) share a
 * 12-partition topic, 4 each. Then instance A is killed with SIGKILL: the members carry on through B with their
 * partitions. Then one consumer stops heartbeating (as if killed): within its session timeout its partitions move
 * to the two others (6 each), and its commit is refused. From every heartbeat answer (ownership intervals on
 * this JVM's monotonic clock): no partition ever had two owners. Logs stay under {@code target/it/group-failover}.
 */
class GroupFailoverIT {
    static final Duration STARTUP = Duration.ofSeconds(120);
    static final long SESSION_MS = 4_000;
    static final int PARTITIONS = 12;
    static final ObjectMapper JSON = new ObjectMapper();

    private final Path work = Path.of("target", "it", "group-failover").toAbsolutePath();

    /** A consumer that owns exactly what its last answer gave it, while its lease (session timeout) holds. */
    final class Consumer extends Thread {
        final int index;
        final List<PackagedService> instances;
        final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        final Ownership ownership;
        volatile boolean running = true;
        volatile String memberId;
        volatile int epoch;
        volatile Throwable failure;
        volatile long answered;
        private int next;

        Consumer(int index, List<PackagedService> instances, Ownership.Ledger ledger) {
            this.index = index;
            this.instances = instances;
            this.ownership = new Ownership(index, SESSION_MS, ledger);
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (running) {
                    long interval = heartbeat();
                    Thread.sleep(interval); // the protocol's pace: the answer's heartbeatIntervalMs
                }
                ownership.releaseAll(System.nanoTime()); // "killed": it consumes nothing from here on
            } catch (Throwable t) {
                failure = t;
            }
        }

        private long heartbeat() throws Exception {
            long sent = System.nanoTime();
            if (ownership.leaseRanOut(sent)) {
                ownership.releaseAll(sent); // lease ran out: stop consuming and rejoin
                epoch = 0;
            }
            String body = "{\"memberId\":" + (memberId == null ? "null" : "\"" + memberId + "\"") + ",\"memberEpoch\":"
                    + epoch + ",\"topics\":[\"orders\"],\"sessionTimeoutMs\":" + SESSION_MS
                    + ",\"ownedPartitions\":[{\"topic\":\"orders\",\"partitions\":" + new TreeSet<>(ownership.owned()) + "}],"
                    + "\"clientId\":\"c" + index + "\"}";
            for (int attempt = 0; attempt < instances.size(); attempt++) {
                PackagedService instance = instances.get(next++ % instances.size());
                HttpResponse<String> r;
                try {
                    r = instance.send(http, "POST", "/v1/groups/workers/heartbeat", body);
                } catch (java.io.IOException down) {
                    continue; // that instance is gone: the other one answers
                }
                long received = System.nanoTime();
                JsonNode a = JSON.readTree(r.body());
                if (r.statusCode() != 200) {
                    ownership.releaseAll(received);
                    if (r.statusCode() == 404) {
                        memberId = null;
                    }
                    assertThat(r.statusCode()).as(r.body()).isIn(404, 409);
                    epoch = 0;
                    return 0;
                }
                Set<Integer> now = new TreeSet<>();
                a.get("assignment").forEach(tps -> tps.get("partitions").forEach(p -> now.add(p.asInt())));
                ownership.answered(now, sent, received);
                memberId = a.get("memberId").asText();
                epoch = a.get("memberEpoch").asInt();
                answered++;
                return a.get("heartbeatIntervalMs").asLong();
            }
            return 100; // no instance answered; try again soon
        }
    }

    @Test
    void membersCarryOnThroughTheOtherInstanceAndADeadMembersPartitionsMove() throws Exception {
        PackagedService.deleteTree(work);
        Path data = work.resolve("hot");
        Files.createDirectories(work.resolve("a"));
        Files.createDirectories(work.resolve("b"));
        PackagedService a = PackagedService.start(work.resolve("a"), data);
        PackagedService b = PackagedService.start(work.resolve("b"), data);
        List<Consumer> consumers = new ArrayList<>();
        try {
            a.awaitReady(STARTUP);
            b.awaitReady(STARTUP);
            HttpClient http = HttpClient.newHttpClient();
            assertThat(a.send(http, "POST", "/v1/topics", "{\"name\":\"orders\",\"partitions\":" + PARTITIONS + "}")
                    .statusCode()).isEqualTo(201);
            List<PackagedService> instances = new CopyOnWriteArrayList<>(List.of(a, b));
            Ownership.Ledger ledger = new Ownership.Ledger();
            for (int i = 0; i < 3; i++) {
                Consumer c = new Consumer(i, instances, ledger);
                consumers.add(c);
                c.start();
            }
            awaitOwned(consumers, 4, 60);

            // SIGKILL instance A: members go on through B, keeping their partitions.
            a.process().destroyForcibly().waitFor();
            long[] answeredBefore = consumers.stream().mapToLong(c -> c.answered).toArray();
            long deadline = System.nanoTime() + 3 * SESSION_MS * 1_000_000;
            for (int i = 0; i < consumers.size(); i++) {
                while (consumers.get(i).answered < answeredBefore[i] + 4 && System.nanoTime() < deadline) {
                    Thread.sleep(50); // four more answered heartbeats each, all through B
                }
                assertThat(consumers.get(i).answered).as("consumer %d heartbeats through B", i)
                        .isGreaterThanOrEqualTo(answeredBefore[i] + 4);
            }
            consumers.forEach(c -> assertThat(c.ownership.owned()).as("consumer %d after A died", c.index).hasSize(4));

            // Consumer 0 stops heartbeating: its partitions go to the two others within the session timeout.
            Consumer dead = consumers.get(0);
            dead.running = false;
            dead.join();
            long stopped = System.nanoTime();
            awaitOwned(consumers.subList(1, 3), 6, 30);
            long movedMs = (System.nanoTime() - stopped) / 1_000_000;
            System.out.println("partitions of the stopped consumer moved " + movedMs + " ms after it stopped heartbeating");
            assertThat(movedMs).isLessThan(SESSION_MS + 1_000 + SESSION_MS / 3 + 2_000);
            HttpResponse<String> late = b.send(http, "PUT", "/v1/groups/workers/offsets", "{\"memberId\":\""
                    + dead.memberId + "\",\"memberEpoch\":" + dead.epoch
                    + ",\"offsets\":[{\"topic\":\"orders\",\"partition\":0,\"offset\":0}]}");
            assertThat(late.statusCode()).as(late.body()).isEqualTo(404);

            for (Consumer c : consumers) {
                c.running = false;
                c.join(10_000);
                assertThat(c.failure).as("consumer %d", c.index).isNull();
            }
            ledger.assertNoPartitionHadTwoOwners();
            assertThat(ledger.isEmpty()).isFalse();
        } finally {
            consumers.forEach(c -> c.running = false);
            a.process().destroyForcibly();
            b.process().destroyForcibly();
        }
    }

    private static void awaitOwned(List<Consumer> consumers, int each, int seconds) throws InterruptedException {
        Ownership.awaitEach(consumers.stream().map(c -> c.ownership).toList(), each, seconds, () -> consumers
                .forEach(c -> assertThat(c.failure).as("consumer %d", c.index).isNull()));
    }
}
