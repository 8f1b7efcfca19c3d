package io.tierlog.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * One consumer's membership in a group (docs/api.md, "Consumer groups that share work"): a daemon thread that
 * heartbeats every {@code heartbeatIntervalMs}, and at once when the consumer gave up partitions, reporting in
 * {@code ownedPartitions} what the consumer still consumes. It never changes what the consumer consumes itself: it
 * records the service's assignment and whether everything was lost, and {@link Consumer#poll} acts on both on its
 * own thread (callbacks, commits), then calls {@link #owned}. That order is what makes "a partition never has two
 * owners" hold on the client side: a revoked partition stays listed until the consumer stopped reading it.
 *
 * <p>Lost means: 404 {@code unknown-member} (join again as a new member), 409 {@code fenced-member} (rejoin with
 * epoch 0), or no answer for a session timeout since the last answered heartbeat was sent (the service may have
 * expired the member). Thread-safe (its state is guarded by this).
 */
final class GroupMembership implements AutoCloseable {
    private final HttpTransport http;
    private final String group;
    private final List<String> topics;
    private final String clientId;
    private final Duration sessionTimeout;
    private final Runnable onChange;
    private final Thread thread;

    private String memberId;
    private int memberEpoch;
    private long intervalMs = 1000;
    /** The service's latest assignment for this member; null before the first answer. */
    private Set<TopicPartition> assignment = Set.of();
    /** What the consumer consumes, as it last told us. */
    private Set<TopicPartition> owned = Set.of();
    private boolean lost;
    private boolean heartbeatNow = true;
    private boolean closing;
    private long lastAnsweredSendNanos = System.nanoTime();

    GroupMembership(HttpTransport http, String group, List<String> topics, String clientId, Duration sessionTimeout,
                    Runnable onChange) {
        this.http = http;
        this.group = group;
        this.topics = List.copyOf(topics);
        this.clientId = clientId;
        this.sessionTimeout = sessionTimeout;
        this.onChange = onChange;
        this.thread = new Thread(this::run, "tierlog-heartbeat-" + group);
        thread.setDaemon(true);
        thread.start();
    }

    /** The latest assignment; the partitions the consumer should consume. */
    synchronized Set<TopicPartition> assignment() {
        return assignment;
    }

    /** True once, after the member lost its partitions (the flag is cleared by this call). */
    synchronized boolean takeLost() {
        boolean l = lost;
        lost = false;
        return l;
    }

    synchronized String memberId() {
        return memberId;
    }

    synchronized int memberEpoch() {
        return memberEpoch;
    }

    /** The consumer now consumes exactly {@code partitions}; if that dropped any, the service hears it at once. */
    synchronized void owned(Set<TopicPartition> partitions) {
        if (lost) {
            return; // the consumer has yet to see the loss; it reports again after dropping everything
        }
        boolean dropped = !partitions.containsAll(owned);
        owned = Set.copyOf(partitions);
        if (dropped) {
            heartbeatNow = true;
            notifyAll();
        }
    }

    /** Leaves the group (epoch -1), so its partitions are free at once, and stops the heartbeats. */
    @Override
    public void close() {
        synchronized (this) {
            closing = true;
            notifyAll();
        }
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String id;
        synchronized (this) {
            id = memberId;
        }
        if (id != null) {
            try {
                http.call("POST", "/v1/groups/" + Admin.path(group) + "/heartbeat", body(id, -1, Set.of()), false, 0,
                        sessionTimeout);
            } catch (TierlogException alreadyGone) {
                // expired or fenced already: nothing to leave
            }
        }
    }

    private void run() {
        int failures = 0;
        while (true) {
            String id;
            int epoch;
            Set<TopicPartition> reported;
            synchronized (this) {
                long waitUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(intervalMs);
                while (!closing && !heartbeatNow) {
                    long left = waitUntil - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    try {
                        TimeUnit.NANOSECONDS.timedWait(this, left);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (closing) {
                    return;
                }
                heartbeatNow = false;
                id = memberId;
                epoch = memberEpoch;
                reported = owned;
            }
            long sent = System.nanoTime();
            try {
                // One attempt, bounded by the session: this loop retries at its own pace, inside the session.
                JsonNode a = http.call("POST", "/v1/groups/" + Admin.path(group) + "/heartbeat",
                        body(id, epoch, reported), false, 0, sessionTimeout);
                failures = 0;
                Set<TopicPartition> now = new TreeSet<>();
                for (JsonNode t : a.path("assignment")) {
                    for (JsonNode p : t.path("partitions")) {
                        now.add(new TopicPartition(t.path("topic").asText(), p.asInt()));
                    }
                }
                synchronized (this) {
                    memberId = a.path("memberId").asText();
                    memberEpoch = a.path("memberEpoch").asInt();
                    intervalMs = Math.max(100, a.path("heartbeatIntervalMs").asLong(1000));
                    lastAnsweredSendNanos = sent;
                    boolean changed = !now.equals(assignment);
                    assignment = Set.copyOf(now);
                    if (changed) {
                        onChange.run();
                    }
                }
            } catch (ProblemException p) {
                if (p.type().equals("unknown-member") || p.type().equals("fenced-member")) {
                    synchronized (this) {
                        if (p.type().equals("unknown-member")) {
                            memberId = null;
                        }
                        memberEpoch = 0;
                        loseAll();
                        heartbeatNow = true;
                    }
                } else {
                    failed(++failures);
                }
            } catch (TierlogException unreachable) {
                failed(++failures);
            }
        }
    }

    /** No answer (or a retriable error): retried soon; the session is watched by {@link #checkSession}. */
    private void failed(int failures) {
        long backoff = Math.min(1000, 50L << Math.min(failures, 5));
        synchronized (this) {
            checkSession();
            try {
                wait(backoff); // pace retries; a close or a drop wakes it
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            heartbeatNow = true;
        }
    }

    /**
     * Once a session has passed since the last answered heartbeat was sent, the service may have expired the member
     * and given its partitions to others: everything is lost from that instant. {@link Consumer#poll} calls this
     * (it wakes up for the deadline, {@link #nanosToSessionEnd}), so the loss does not wait for a heartbeat attempt
     * that may hang.
     */
    synchronized void checkSession() {
        if ((!assignment.isEmpty() || !owned.isEmpty()) && nanosToSessionEnd() < 0) {
            loseAll();
        }
    }

    /** Time left of the session started by the last answered heartbeat's sending (negative: over). */
    synchronized long nanosToSessionEnd() {
        return lastAnsweredSendNanos + sessionTimeout.toNanos() - System.nanoTime();
    }

    /** Under this: everything is gone; the consumer will stop reading it and report nothing owned. */
    private void loseAll() {
        assignment = Set.of();
        owned = Set.of();
        lost = true;
        onChange.run();
    }

    private ObjectNode body(String id, int epoch, Set<TopicPartition> ownedNow) {
        ObjectNode b = HttpTransport.JSON.createObjectNode();
        if (id == null) {
            b.putNull("memberId");
        } else {
            b.put("memberId", id);
        }
        b.put("memberEpoch", epoch);
        ArrayNode t = b.putArray("topics");
        topics.forEach(t::add);
        b.put("sessionTimeoutMs", sessionTimeout.toMillis());
        Map<String, Set<Integer>> byTopic = new TreeMap<>();
        ownedNow.forEach(tp -> byTopic.computeIfAbsent(tp.topic(), k -> new TreeSet<>()).add(tp.partition()));
        ArrayNode o = b.putArray("ownedPartitions");
        byTopic.forEach((topic, ps) -> {
            ArrayNode list = o.addObject().put("topic", topic).putArray("partitions");
            ps.forEach(list::add);
        });
        b.put("clientId", clientId);
        return b;
    }
}
