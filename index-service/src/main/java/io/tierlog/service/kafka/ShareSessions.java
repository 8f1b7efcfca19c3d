package io.tierlog.service.kafka;

import io.tierlog.sharegroups.Ack;
import io.tierlog.sharegroups.AckType;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * This instance's share sessions (KIP-932): for each share consumer (group and member id), the partitions it fetches,
 * its session epoch, and the runs of records it acquired and has not acknowledged yet, each with the range lease
 * that acknowledges it on the share-group engine. The engine checks that a run is still the delivery it handed out
 * (a run whose lock ran out and went to another member is refused there), so what is kept here only maps Kafka's
 * acknowledgements, which name offsets, onto those leases.
 *
 * <p>Bounded: at most {@code capacity} sessions; a new one takes the slot of the least recently used one idle for
 * {@code evictAfter}, else SHARE_SESSION_LIMIT_REACHED. An evicted or lost session (a restart) only means its
 * records come back when their locks run out; the client opens a new session on SHARE_SESSION_NOT_FOUND.
 * Thread-safe: the cache is guarded by this object, a session by itself.
 */
final class ShareSessions {
    private final int capacity;
    private final Duration evictAfter;
    private final Clock clock;
    /** In access order: the first entry is the least recently used. */
    private final LinkedHashMap<Key, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);
    /**
     * Where the next session opened starts its turns: consumers that join together then begin at different
     * partitions instead of all acquiring from the first one at once (as the HTTP leases' rotation does).
     */
    private int nextSessionStart;

    ShareSessions(int capacity, Duration evictAfter, Clock clock) {
        this.capacity = capacity;
        this.evictAfter = evictAfter;
        this.clock = clock;
    }

    /** A member's session, as the caller that opened it ({@code owner}): another caller naming it finds none. */
    record Key(String group, String memberId, String owner) {
    }

    /** A partition of a session, by the topic id the client names and the name it resolved to. */
    record Part(Uuid topicId, String topic, int partition) {
    }

    /** Offsets {@code first..last} acquired in one delivery, acknowledged through {@code lease} (a range lease). */
    record Acquired(long first, long last, int deliveryCount, String lease) {
    }

    /** A session, or why there is none. */
    record Lookup(Session session, Errors error) {
    }

    static final class Session {
        final Key key;
        private int epoch;
        private long lastUsedMs;
        private int nextStart;
        private final LinkedHashSet<Part> parts = new LinkedHashSet<>();
        private final Map<Part, TreeMap<Long, Acquired>> acquired = new LinkedHashMap<>();

        Session(Key key, int firstStart) {
            this.key = key;
            this.nextStart = firstStart;
        }

        synchronized List<Part> parts() {
            return List.copyOf(parts);
        }

        /** Where among {@code n} partitions a fetch starts acquiring: one further each time, so all take turns. */
        synchronized int nextStart(int n) {
            return n == 0 ? 0 : Math.floorMod(nextStart++, n);
        }

        synchronized void add(Part part) {
            parts.add(part);
        }

        /** Forgets a partition; returns what it still had acquired, for release. */
        synchronized List<Acquired> forget(Part part) {
            parts.remove(part);
            TreeMap<Long, Acquired> runs = acquired.remove(part);
            return runs == null ? List.of() : List.copyOf(runs.values());
        }

        synchronized void acquired(Part part, Acquired run) {
            acquired.computeIfAbsent(part, p -> new TreeMap<>()).put(run.first(), run);
        }

        /** Everything still acquired, by partition, emptied (the session is closing). */
        synchronized Map<Part, List<Acquired>> drain() {
            Map<Part, List<Acquired>> all = new LinkedHashMap<>();
            acquired.forEach((p, runs) -> all.put(p, List.copyOf(runs.values())));
            acquired.clear();
            return all;
        }

        /**
         * The engine's acks for Kafka's acknowledgement batches of one partition, taken out of this session's
         * acquisitions: each batch names offsets {@code first..last} and one type for all of them or one per offset
         * (Kafka's 0 gap, 1 accept, 2 release, 3 reject; a gap, an offset with no record, is accepted). Null, and
         * nothing taken, when any offset named was not acquired by this session or a type is unknown.
         */
        synchronized List<Ack> take(Part part, List<long[]> batches, List<List<Byte>> types) {
            TreeMap<Long, Acquired> runs = acquired.get(part);
            if (runs == null) {
                return null;
            }
            TreeMap<Long, Acquired> left = new TreeMap<>(runs);
            List<Ack> acks = new ArrayList<>();
            for (int b = 0; b < batches.size(); b++) {
                long first = batches.get(b)[0];
                long last = batches.get(b)[1];
                List<Byte> typed = types.get(b);
                if (last < first || (typed.size() != 1 && typed.size() != last - first + 1)) {
                    return null;
                }
                long from = first;
                while (from <= last) {
                    byte type = typed.size() == 1 ? typed.get(0) : typed.get((int) (from - first));
                    long to = from;
                    while (to < last && typed.size() != 1 && typed.get((int) (to + 1 - first)) == type) {
                        to++;
                    }
                    if (typed.size() == 1) {
                        to = last;
                    }
                    AckType ackType = ackType(type);
                    boolean taken = ackType == AckType.RENEW ? renewRange(left, from, to, acks)
                            : ackType != null && takeRange(left, from, to, ackType, acks);
                    if (!taken) {
                        return null;
                    }
                    from = to + 1;
                }
            }
            runs.clear();
            runs.putAll(left);
            return acks;
        }

        /** Takes offsets {@code from..to}, every one of them acquired, out of {@code runs} as acks of {@code type}. */
        private static boolean takeRange(TreeMap<Long, Acquired> runs, long from, long to, AckType type, List<Ack> acks) {
            long next = from;
            while (next <= to) {
                Map.Entry<Long, Acquired> e = runs.floorEntry(next);
                if (e == null || e.getValue().last() < next) {
                    return false;
                }
                Acquired run = e.getValue();
                long end = Math.min(to, run.last());
                acks.add(new Ack(run.lease(), type, next, end));
                runs.remove(run.first());
                if (run.first() < next) {
                    runs.put(run.first(), new Acquired(run.first(), next - 1, run.deliveryCount(), run.lease()));
                }
                if (end < run.last()) {
                    runs.put(end + 1, new Acquired(end + 1, run.last(), run.deliveryCount(), run.lease()));
                }
                next = end + 1;
            }
            return true;
        }

        /**
         * Renews offsets {@code from..to}, every one of them acquired (KIP-1222): their locks run again from now, and
         * they stay the member's, to be acknowledged for good later.
         */
        private static boolean renewRange(TreeMap<Long, Acquired> runs, long from, long to, List<Ack> acks) {
            long next = from;
            while (next <= to) {
                Map.Entry<Long, Acquired> e = runs.floorEntry(next);
                if (e == null || e.getValue().last() < next) {
                    return false;
                }
                long end = Math.min(to, e.getValue().last());
                acks.add(new Ack(e.getValue().lease(), AckType.RENEW, next, end));
                next = end + 1;
            }
            return true;
        }

        private static AckType ackType(byte kafkaType) {
            return switch (kafkaType) {
                case 0, 1 -> AckType.ACCEPT;
                case 2 -> AckType.RELEASE;
                case 3 -> AckType.REJECT;
                case 4 -> AckType.RENEW;
                default -> null;
            };
        }
    }

    /**
     * Epoch 0: a new session for the member (a session it had is closed; what that one still had acquired is put in
     * {@code released}).
     */
    synchronized Lookup open(Key key, Map<Part, List<Acquired>> released) {
        Session old = sessions.remove(key);
        if (old != null) {
            released.putAll(old.drain());
        }
        if (sessions.size() >= capacity) {
            Iterator<Session> lru = sessions.values().iterator();
            Session oldest = lru.next();
            if (clock.millis() - oldest.lastUsedMs < evictAfter.toMillis()) {
                return new Lookup(null, Errors.SHARE_SESSION_LIMIT_REACHED);
            }
            lru.remove();
        }
        Session s = new Session(key, nextSessionStart++);
        s.lastUsedMs = clock.millis();
        sessions.put(key, s);
        return new Lookup(s, Errors.NONE);
    }

    /** Epoch above 0: the member's session, moved on to {@code epoch}, which must follow its last one. */
    synchronized Lookup next(Key key, int epoch) {
        Session s = sessions.get(key);
        if (s == null) {
            return new Lookup(null, Errors.SHARE_SESSION_NOT_FOUND);
        }
        synchronized (s) {
            if (epoch != s.epoch + 1) {
                return new Lookup(null, Errors.INVALID_SHARE_SESSION_EPOCH);
            }
            s.epoch = epoch;
            s.lastUsedMs = clock.millis();
        }
        return new Lookup(s, Errors.NONE);
    }

    /** Epoch -1: ends the member's session, if it has one (null if not). */
    synchronized Session close(Key key) {
        return sessions.remove(key);
    }

    synchronized int size() {
        return sessions.size();
    }
}
