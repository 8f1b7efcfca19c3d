package io.tierlog.bench.groups;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.bench.http.BlockingHttp;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;

/**
 * A member of a Tierlog consumer group that follows docs/consumer-groups.md's loop over HTTP: heartbeat every
 * {@code heartbeatIntervalMs} with the partitions it owns, and at once after it gave partitions up (as Kafka's
 * consumer acknowledges a revocation at once); read each newly assigned partition from offset 0 (no commits in
 * this benchmark) and report its first record to the {@link Tracker}. {@link #kill} stops the thread without a leave.
 */
final class TierlogMember implements Member {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final String name;
    private final URI base;
    private final String group;
    private final String topic;
    private final long sessionTimeoutMs;
    private final Tracker tracker;
    private final Thread thread;
    private volatile Set<Integer> owned = Set.of();
    private volatile boolean stopped;
    private volatile boolean leave;
    private String memberId;
    private int epoch;

    TierlogMember(String name, URI base, String group, String topic, long sessionTimeoutMs, Tracker tracker) {
        this.name = name;
        this.base = base;
        this.group = group;
        this.topic = topic;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.tracker = tracker;
        this.thread = new Thread(this::loop, "tierlog-member-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        try {
            while (!stopped) {
                JsonNode a = heartbeat(epoch);
                if (a == null) {
                    continue; // expired or fenced: dropped everything, joins again at once
                }
                memberId = a.get("memberId").asText();
                epoch = a.get("memberEpoch").asInt();
                Set<Integer> assigned = new TreeSet<>();
                for (JsonNode tp : a.get("assignment")) {
                    if (topic.equals(tp.get("topic").asText())) {
                        tp.get("partitions").forEach(p -> assigned.add(p.asInt()));
                    }
                }
                boolean revoked = !assigned.containsAll(owned);
                for (int p : assigned) {
                    if (!owned.contains(p)) {
                        readFirst(p);
                    }
                }
                owned = Set.copyOf(assigned);
                if (!revoked) {
                    sleep(a.get("heartbeatIntervalMs").asLong());
                }
            }
            if (leave && memberId != null) {
                heartbeat(-1);
            }
        } catch (Exception e) {
            if (!stopped) {
                System.err.println("Tierlog member " + name + " failed: " + e);
            }
        }
    }

    private JsonNode heartbeat(int withEpoch) throws Exception {
        ObjectNode body = JSON.createObjectNode();
        body.put("memberId", memberId);
        body.put("memberEpoch", withEpoch);
        body.putArray("topics").add(topic);
        body.put("sessionTimeoutMs", sessionTimeoutMs);
        body.putArray("ownedPartitions").addObject().put("topic", topic).set("partitions",
                JSON.valueToTree(owned));
        body.put("clientId", name);
        byte[] bytes = JSON.writeValueAsBytes(body);
        BlockingHttp.Posted r = BlockingHttp.post(base.resolve("/v1/groups/" + group + "/heartbeat"),
                "application/json", bytes, 0, bytes.length, BlockingHttp.CONNECT_TIMEOUT, TIMEOUT);
        if ((r.status() == 404 || r.status() == 409) && withEpoch >= 0) {
            // docs/consumer-groups.md: 404 unknown-member (expired: on a loaded machine this thread can miss its
            // session) joins again with no id; 409 fenced-member rejoins with epoch 0; both drop every partition.
            System.err.println("Tierlog member " + name + ": heartbeat answered " + r.status() + ", rejoining");
            if (r.status() == 404) {
                memberId = null;
            }
            epoch = 0;
            owned = Set.of();
            return null;
        }
        if (r.status() != 200) {
            throw new IllegalStateException("heartbeat answered " + r.status() + ": " + r.bodyText());
        }
        return JSON.readTree(r.body());
    }

    private void readFirst(int partition) throws Exception {
        URI u = base.resolve("/v1/topics/" + topic + "/partitions/" + partition + "/records?offset=0&maxRecords=1");
        try (BlockingHttp.Response r = BlockingHttp.get(u, BlockingHttp.CONNECT_TIMEOUT, TIMEOUT)) {
            String body = new String(r.bytes(), StandardCharsets.UTF_8);
            if (r.status() != 200 || JSON.readTree(body).get("records").isEmpty()) {
                throw new IllegalStateException("fetch " + u + " answered " + r.status() + ": " + body);
            }
        }
        tracker.firstRecord(name, partition, System.nanoTime());
    }

    private void sleep(long millis) throws InterruptedException {
        long until = System.nanoTime() + millis * 1_000_000;
        while (!stopped && System.nanoTime() < until) {
            Thread.sleep(Math.min(20, Math.max(1, (until - System.nanoTime()) / 1_000_000)));
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Set<Integer> owned() {
        return owned;
    }

    @Override
    public void kill() {
        stopped = true;
    }

    @Override
    public void close() {
        leave = true;
        stopped = true;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
