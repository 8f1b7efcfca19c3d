package io.tierlog.service.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two packaged service instances (separate processes) on one hot volume serve one share group on a 2-partition
 * topic; ten consumers lease through both, accepting, releasing, rejecting and forgetting records at random, and
 * dying at random (a dead consumer drops what it holds unacknowledged; a fresh one takes its place). One instance is
 * killed with SIGKILL mid-way (its consumers move to the other). From the audit of every lease and ack answer: every
 * record ends accepted exactly once or in the dead-letter topic exactly once, never both (one whose ack answer was
 * lost with the killed instance may be either); no lease was answered before the previous holder's lease of that
 * record could have run out; and no acknowledgement answered ok was lost (a record accepted or rejected with an ok
 * answer is never leased again, and every ok reject is in the dead-letter topic).
 */
class ShareGroupsTwoInstancesIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int RECORDS = 160;
    private static final int CONSUMERS = 10;
    private static final long LEASE_MS = 1500;
    private final List<PackagedService> services = new ArrayList<>();

    @AfterEach
    void stop() {
        services.forEach(s -> s.process().destroyForcibly());
        // consumers still running after a failure stop with the JVM
    }

    record Lease(String record, int deliveryCount, long sentMs, long answeredMs) {
    }

    @Test
    void consumersThroughTwoInstancesDrainATopicWhileOneInstanceIsKilled() throws Exception {
        Path work = Path.of("target/it-share-groups");
        PackagedService.deleteTree(work);
        Path data = work.resolve("hot");
        Files.createDirectories(work.resolve("a"));
        Files.createDirectories(work.resolve("b"));
        PackagedService a = PackagedService.start(work.resolve("a"), data);
        PackagedService b = PackagedService.start(work.resolve("b"), data);
        services.add(a);
        services.add(b);
        a.awaitReady(Duration.ofSeconds(120));
        b.awaitReady(Duration.ofSeconds(120));
        HttpClient http = HttpClient.newHttpClient();
        assertThat(a.send(http, "POST", "/v1/topics", "{\"name\":\"jobs\",\"partitions\":2}").statusCode()).isEqualTo(201);
        assertThat(a.send(http, "POST", "/v1/topics", "{\"name\":\"jobs.dlq\",\"partitions\":1}").statusCode()).isEqualTo(201);
        assertThat(b.send(http, "PUT", "/v1/share-groups/pool/config", "{\"start\":\"earliest\","
                + "\"max.delivery.attempts\":3,\"dead.letter.topic\":\"jobs.dlq\"}").statusCode()).isEqualTo(200);
        StringBuilder body = new StringBuilder("{\"records\":[");
        for (int i = 0; i < RECORDS; i++) {
            body.append(i == 0 ? "" : ",").append("{\"partition\":").append(i % 2).append(",\"value\":").append(i).append('}');
        }
        assertThat(a.send(http, "POST", "/v1/topics/jobs/records", body.append("]}").toString()).statusCode()).isEqualTo(200);

        List<Lease> leases = Collections.synchronizedList(new ArrayList<>());
        Map<String, String> releasedOk = new ConcurrentHashMap<>(); // record#dc released: ok, or its answer lost with the instance
        Map<String, Integer> settledOk = new ConcurrentHashMap<>(); // record -> delivery count accepted/rejected with ok
        Map<String, Boolean> rejectedOk = new ConcurrentHashMap<>();
        AtomicInteger deaths = new AtomicInteger();
        Map<String, AtomicInteger> accepted = new ConcurrentHashMap<>();
        Map<String, Boolean> unknownOutcome = new ConcurrentHashMap<>();
        AtomicInteger acceptedTotal = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(CONSUMERS);
        List<Future<?>> consumers = new ArrayList<>();
        for (int c = 0; c < CONSUMERS; c++) {
            int id = c;
            consumers.add(pool.submit(() -> {
                PackagedService via = id % 2 == 0 ? a : b;
                while (true) {
                    try {
                        if (!via.process().isAlive()) {
                            via = a;
                        }
                        long sent = System.currentTimeMillis();
                        HttpResponse<String> r = via.send(http, "POST", "/v1/share-groups/pool/topics/jobs/lease",
                                "{\"maxRecords\":" + ThreadLocalRandom.current().nextInt(1, 4) + ",\"leaseMs\":"
                                        + LEASE_MS + ",\"waitMs\":500}");
                        long answered = System.currentTimeMillis();
                        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                        JsonNode recs = JSON.readTree(r.body()).get("records");
                        if (recs.isEmpty()) {
                            JsonNode d = JSON.readTree(via.send(http, "GET", "/v1/share-groups/pool", null).body());
                            long lag = 0;
                            for (JsonNode p : d.get("topics").get(0).get("partitions")) {
                                lag += p.get("lag").asLong();
                            }
                            if (lag == 0 && d.get("topics").get(0).get("partitions").size() == 2) {
                                return null;
                            }
                            continue;
                        }
                        for (JsonNode rec : recs) {
                            String record = rec.get("partition").asInt() + "@" + rec.get("offset").asLong();
                            int dc = rec.get("deliveryCount").asInt();
                            leases.add(new Lease(record, dc, sent, answered));
                        }
                        if (ThreadLocalRandom.current().nextInt(100) < 4) {
                            deaths.incrementAndGet(); // this consumer dies holding what it leased; a new one starts
                            continue;
                        }
                        for (JsonNode rec : recs) {
                            String record = rec.get("partition").asInt() + "@" + rec.get("offset").asLong();
                            int dc = rec.get("deliveryCount").asInt();
                            int roll = ThreadLocalRandom.current().nextInt(100);
                            String type = roll < 75 ? "accept" : roll < 85 ? "release" : roll < 90 ? "reject" : null;
                            if (type == null) {
                                continue; // forgotten: its lease runs out
                            }
                            HttpResponse<String> ack;
                            try {
                                ack = via.send(http, "POST", "/v1/share-groups/pool/topics/jobs/acks",
                                        "{\"acks\":[{\"lease\":\"" + rec.get("lease").asText() + "\",\"type\":\"" + type
                                                + "\"}]}");
                            } catch (java.io.IOException lost) {
                                unknownOutcome.put(record, true); // the instance died: applied or not
                                if (type.equals("release")) {
                                    // applied before the answer was lost: the record is available again at once
                                    releasedOk.put(record + "#" + dc, "");
                                }
                                continue;
                            }
                            boolean ok = JSON.readTree(ack.body()).get("results").get(0).get("ok").asBoolean();
                            if (ok && type.equals("accept")) {
                                accepted.computeIfAbsent(record, k -> new AtomicInteger()).incrementAndGet();
                                acceptedTotal.incrementAndGet();
                                settledOk.put(record, dc);
                            } else if (ok && type.equals("reject")) {
                                rejectedOk.put(record, true);
                                settledOk.put(record, dc);
                            } else if (ok && type.equals("release")) {
                                releasedOk.put(record + "#" + dc, "");
                            }
                        }
                    } catch (java.io.IOException instanceDied) {
                        // a lease answer lost with the killed instance: its records come back when the lease runs out
                    }
                }
            }));
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
        while (acceptedTotal.get() < RECORDS / 3 && System.nanoTime() < deadline) {
            Thread.sleep(50); // progress of other threads over HTTP; nothing to latch on
        }
        b.process().destroyForcibly().waitFor();
        for (Future<?> f : consumers) {
            f.get(300, java.util.concurrent.TimeUnit.SECONDS);
        }
        pool.shutdown();

        Map<String, Integer> deadLettered = new HashMap<>();
        JsonNode dlq = JSON.readTree(a.send(http, "GET", "/v1/topics/jobs.dlq/partitions/0/records?offset=0&maxRecords=1000",
                null).body());
        for (JsonNode r : dlq.get("records")) {
            JsonNode h = r.get("headers");
            deadLettered.merge(h.get("tierlog.dlq.partition").asText() + "@" + h.get("tierlog.dlq.offset").asText(), 1,
                    Integer::sum);
        }
        assertThat(deaths.get()).as("consumers died").isPositive();
        assertThat(accepted.values()).allMatch(n -> n.get() == 1);
        assertThat(rejectedOk.keySet()).as("every ok reject is in the dead-letter topic")
                .allMatch(deadLettered::containsKey);
        assertThat(deadLettered.values()).allMatch(n -> n == 1);
        for (int i = 0; i < RECORDS; i++) {
            String record = (i % 2) + "@" + (i / 2);
            assertThat(accepted.containsKey(record) && deadLettered.containsKey(record)).as(record).isFalse();
            assertThat(accepted.containsKey(record) || deadLettered.containsKey(record) || unknownOutcome.containsKey(record))
                    .as("%s accepted or dead-lettered", record).isTrue();
        }
        Map<String, List<Lease>> byRecord = new HashMap<>();
        leases.forEach(l -> byRecord.computeIfAbsent(l.record(), k -> new ArrayList<>()).add(l));
        for (List<Lease> ls : byRecord.values()) {
            Integer settledAt = settledOk.get(ls.get(0).record());
            if (settledAt != null) {
                assertThat(ls).as("%s leased again after an ok accept/reject of delivery %d", ls.get(0).record(),
                        settledAt).allMatch(l -> l.deliveryCount() <= settledAt);
            }
            ls.sort((x, y) -> Integer.compare(x.deliveryCount(), y.deliveryCount()));
            for (int k = 0; k + 1 < ls.size(); k++) {
                Lease prev = ls.get(k);
                Lease next = ls.get(k + 1);
                assertThat(next.deliveryCount()).isGreaterThan(prev.deliveryCount());
                if (next.deliveryCount() == prev.deliveryCount() + 1
                        && !releasedOk.containsKey(prev.record() + "#" + prev.deliveryCount())) {
                    // prev was granted after it was sent, so it ran until at least sent + LEASE_MS
                    assertThat(next.answeredMs()).as("%s#%d answered while #%d was still leased", next.record(),
                            next.deliveryCount(), prev.deliveryCount()).isGreaterThanOrEqualTo(prev.sentMs() + LEASE_MS);
                }
            }
        }
    }
}
