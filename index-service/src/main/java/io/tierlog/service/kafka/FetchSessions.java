package io.tierlog.service.kafka;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * This instance's incremental fetch sessions (KIP-227): for each session, the partitions a consumer fetches, with
 * the fetch offset and size it last asked for and the high watermark and log start it was last told, so that its
 * fetches need to name only what changed and answers name only partitions with news.
 *
 * <p>Bounded: at most {@code capacity} sessions. A new session takes the slot of the least recently used one if that
 * one has been idle for {@code evictAfter} (Kafka's {@code min.incremental.fetch.session.eviction.ms}); otherwise no
 * session is created and the client gets session id 0, which makes it send full fetches (still correct, only larger).
 * An evicted session's next fetch is FETCH_SESSION_ID_NOT_FOUND, after which the client starts a new session with a
 * full fetch, as with Kafka. Sessions are in memory only: after a restart every client starts over the same way.
 *
 * <p>A session belongs to the principal that created it; another caller naming its id is told it does not exist.
 * Thread-safe: the cache is guarded by this object, a session by itself (one client uses a session for one fetch
 * at a time, so there is no contention on it).
 */
public final class FetchSessions {
    private final int capacity;
    private final Duration evictAfter;
    private final Clock clock;
    private final Random ids;
    /** In access order: the first entry is the least recently used. */
    private final LinkedHashMap<Integer, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);
    private final AtomicLong incrementalFetches = new AtomicLong();

    public FetchSessions(int capacity, Duration evictAfter, Clock clock) {
        this(capacity, evictAfter, clock, new SecureRandom());
    }

    FetchSessions(int capacity, Duration evictAfter, Clock clock, Random ids) {
        this.capacity = capacity;
        this.evictAfter = evictAfter;
        this.clock = clock;
        this.ids = ids;
    }

    /** A partition of a session, as the client named it (topic by name before Fetch v13, by id from v13). */
    record Key(String topic, Uuid topicId, int partition) {
    }

    /** What the session remembers of one partition. Guarded by its session. */
    static final class Entry {
        final Key key;
        long fetchOffset;
        int maxBytes;
        long highWatermark = -1;
        long logStartOffset = -1;

        Entry(Key key, long fetchOffset, int maxBytes) {
            this.key = key;
            this.fetchOffset = fetchOffset;
            this.maxBytes = maxBytes;
        }

        /** Records the extent a client was just told; true when it differs from what it was told before. */
        boolean told(long highWatermark, long logStartOffset) {
            boolean changed = highWatermark != this.highWatermark || logStartOffset != this.logStartOffset;
            this.highWatermark = highWatermark;
            this.logStartOffset = logStartOffset;
            return changed;
        }
    }

    /** One client's session: its partitions in the order they were added, and the epoch its next fetch must carry. */
    static final class Session {
        final int id;
        final String owner;
        final LinkedHashMap<Key, Entry> partitions = new LinkedHashMap<>();
        int nextEpoch = 1;
        volatile long lastUsedMs;

        Session(int id, String owner, long now) {
            this.id = id;
            this.owner = owner;
            this.lastUsedMs = now;
        }

        synchronized List<Entry> entries() {
            return new ArrayList<>(partitions.values());
        }
    }

    /** A session looked up for an incremental fetch, or the error to answer instead. */
    record Lookup(Session session, Errors error) {
    }

    /**
     * The session for an incremental fetch (epoch > 0): FETCH_SESSION_ID_NOT_FOUND when there is none of that id for
     * {@code owner}, INVALID_FETCH_SESSION_EPOCH when {@code epoch} is not the one expected. On success the epoch
     * advances, so a repeated request with the same epoch is refused as in Kafka.
     */
    Lookup incremental(int id, int epoch, String owner) {
        Session s;
        synchronized (this) {
            s = sessions.get(id);
        }
        if (s == null || !s.owner.equals(owner)) {
            return new Lookup(null, Errors.FETCH_SESSION_ID_NOT_FOUND);
        }
        synchronized (s) {
            if (epoch != s.nextEpoch) {
                return new Lookup(null, Errors.INVALID_FETCH_SESSION_EPOCH);
            }
            s.nextEpoch = s.nextEpoch == Integer.MAX_VALUE ? 1 : s.nextEpoch + 1;
            s.lastUsedMs = clock.millis();
        }
        incrementalFetches.incrementAndGet();
        return new Lookup(s, Errors.NONE);
    }

    /**
     * A new session with {@code partitions} (after a full fetch with epoch 0), or null when the cache is full of
     * sessions used within {@code evictAfter}.
     */
    Session create(String owner, List<Entry> partitions) {
        long now = clock.millis();
        Session s;
        synchronized (this) {
            if (sessions.size() >= capacity && !evictOne(now)) {
                return null;
            }
            int id;
            do {
                id = ids.nextInt(Integer.MAX_VALUE - 1) + 1; // positive: 0 means "no session"
            } while (sessions.containsKey(id));
            s = new Session(id, owner, now);
            sessions.put(id, s);
        }
        synchronized (s) {
            partitions.forEach(e -> s.partitions.put(e.key, e));
        }
        return s;
    }

    private boolean evictOne(long now) {
        Iterator<Session> lru = sessions.values().iterator();
        if (capacity > 0 && lru.hasNext()) {
            Session oldest = lru.next();
            if (now - oldest.lastUsedMs >= evictAfter.toMillis()) {
                lru.remove();
                return true;
            }
        }
        return false;
    }

    /** Ends session {@code id} of {@code owner} (a full fetch, epoch 0 or -1, names the session it replaces). */
    void close(int id, String owner) {
        synchronized (this) {
            Session s = sessions.get(id);
            if (s != null && s.owner.equals(owner)) {
                sessions.remove(id);
            }
        }
    }

    /** Sessions cached now. */
    public synchronized int size() {
        return sessions.size();
    }

    /** Incremental fetches served since start (for tests and operators). */
    public long incrementalFetches() {
        return incrementalFetches.get();
    }

    /** The entries of {@code s} as a map, for callers that update them under the session's lock. */
    static Map<Key, Entry> partitions(Session s) {
        return s.partitions;
    }
}
