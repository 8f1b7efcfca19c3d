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
import java.util.HashSet;
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

    record Interval(int consumer, int partition, long from, long to) {
    }

    /** A consumer that owns exactly what its last answer gave it, while its lease (session timeout) holds. */
    final class Consumer extends Thread {
        final int index;
        final List<PackagedService> instances;
        final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        final List<Interval> intervals;
        volatile boolean running = true;
        volatile Set<Integer> owns = Set.of();
        volatile String memberId;
        volatile int epoch;
        volatile Throwable failure;
        volatile long answered;
        private final long[] since = new long[PARTITIONS];
        private long lastAnsweredSend;
        private int next;

        Consumer(int index, List<PackagedService> instances, List<Interval> intervals) {
            this.index = index;
            this.instances = instances;
            this.intervals = intervals;
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (running) {
                    long interval = heartbeat();
                    Thread.sleep(interval); // the protocol's pace: the answer's heartbeatIntervalMs
                }
                release(Set.copyOf(owns), System.nanoTime()); // "killed": it consumes nothing from here on
            } catch (Throwable t) {
                failure = t;
            }
        }

        private long heartbeat() throws Exception {
            long sent = System.nanoTime();
            if (!owns.isEmpty() && sent - lastAnsweredSend > SESSION_MS * 1_000_000) {
                release(Set.copyOf(owns), sent); // lease ran out: stop consuming and rejoin
                epoch = 0;
            }
            String body = "{\"memberId\":" + (memberId == null ? "null" : "\"" + memberId + "\"") + ",\"memberEpoch\":"
                    + epoch + ",\"topics\":[\"orders\"],\"sessionTimeoutMs\":" + SESSION_MS
                    + ",\"ownedPartitions\":[{\"topic\":\"orders\",\"partitions\":" + new TreeSet<>(owns) + "}],"
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
                    release(Set.copyOf(owns), received);
                    if (r.statusCode() == 404) {
                        memberId = null;
                    }
                    assertThat(r.statusCode()).as(r.body()).isIn(404, 409);
                    epoch = 0;
                    return 0;
                }
                Set<Integer> now = new TreeSet<>();
                a.get("assignment").forEach(tps -> tps.get("partitions").forEach(p -> now.add(p.asInt())));
                Set<Integer> gone = new HashSet<>(owns);
                gone.removeAll(now);
                release(gone, received);
                for (int p : now) {
                    if (!owns.contains(p)) {
                        since[p] = received;
                    }
                }
                owns = Set.copyOf(now);
                memberId = a.get("memberId").asText();
                epoch = a.get("memberEpoch").asInt();
                lastAnsweredSend = sent;
                answered++;
                return a.get("heartbeatIntervalMs").asLong();
            }
            return 100; // no instance answered; try again soon
        }

        /** Ownership ends now, or when the lease ended (a consumer consumes nothing past its lease) if earlier. */
        private void release(Set<Integer> partitions, long now) {
            long at = lastAnsweredSend == 0 ? now : Math.min(now, lastAnsweredSend + SESSION_MS * 1_000_000);
            for (int p : partitions) {
                intervals.add(new Interval(index, p, since[p], at));
            }
            Set<Integer> left = new HashSet<>(owns);
            left.removeAll(partitions);
            owns = Set.copyOf(left);
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
            List<Interval> intervals = new CopyOnWriteArrayList<>();
            for (int i = 0; i < 3; i++) {
                Consumer c = new Consumer(i, instances, intervals);
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
            consumers.forEach(c -> assertThat(c.owns).as("consumer %d after A died", c.index).hasSize(4));

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
            for (Interval x : intervals) {
                for (Interval y : intervals) {
                    if (x.partition() == y.partition() && x.consumer() != y.consumer()) {
                        assertThat(x.to() <= y.from() || y.to() <= x.from())
                                .as("partition %d owned by consumers %d and %d at once", x.partition(), x.consumer(),
                                        y.consumer()).isTrue();
                    }
                }
            }
            assertThat(intervals).isNotEmpty();
        } finally {
            consumers.forEach(c -> c.running = false);
            a.process().destroyForcibly();
            b.process().destroyForcibly();
        }
    }

    private static void awaitOwned(List<Consumer> consumers, int each, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (consumers.stream().allMatch(c -> c.owns.size() == each)) {
                return;
            }
            for (Consumer c : consumers) {
                assertThat(c.failure).as("consumer %d", c.index).isNull();
            }
            Thread.sleep(50);
        }
        throw new AssertionError("consumers did not reach " + each + " partitions each: "
                + consumers.stream().map(c -> c.owns).toList());
    }
}
