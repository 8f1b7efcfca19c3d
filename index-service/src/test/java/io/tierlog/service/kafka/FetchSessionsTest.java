package io.tierlog.service.kafka;

import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The session cache alone: epochs, owners, and the bound with Kafka's eviction rule, on a manual clock. */
class FetchSessionsTest {
    private final ManualClock clock = new ManualClock();
    private final FetchSessions sessions = new FetchSessions(2, Duration.ofMinutes(2), clock);

    private static List<FetchSessions.Entry> partitions(String topic) {
        return List.of(new FetchSessions.Entry(new FetchSessions.Key(topic, Uuid.ZERO_UUID, 0), 0, 1 << 20));
    }

    @Test
    void eachIncrementalFetchMustCarryTheNextEpoch() {
        FetchSessions.Session s = sessions.create("alice", partitions("t"));
        assertThat(s.id).isPositive();
        assertThat(sessions.incremental(s.id, 1, "alice").error()).isEqualTo(Errors.NONE);
        // A retried request with the same epoch, or a skipped one, is refused as Kafka refuses it.
        assertThat(sessions.incremental(s.id, 1, "alice").error()).isEqualTo(Errors.INVALID_FETCH_SESSION_EPOCH);
        assertThat(sessions.incremental(s.id, 3, "alice").error()).isEqualTo(Errors.INVALID_FETCH_SESSION_EPOCH);
        assertThat(sessions.incremental(s.id, 2, "alice").error()).isEqualTo(Errors.NONE);
        assertThat(sessions.incrementalFetches()).isEqualTo(2);
    }

    @Test
    void aSessionIsOnlyItsOwners() {
        FetchSessions.Session s = sessions.create("alice", partitions("t"));
        assertThat(sessions.incremental(s.id, 1, "mallory").error()).isEqualTo(Errors.FETCH_SESSION_ID_NOT_FOUND);
        sessions.close(s.id, "mallory");
        assertThat(sessions.incremental(s.id, 1, "alice").error()).isEqualTo(Errors.NONE);
        sessions.close(s.id, "alice");
        assertThat(sessions.incremental(s.id, 2, "alice").error()).isEqualTo(Errors.FETCH_SESSION_ID_NOT_FOUND);
        assertThat(sessions.size()).isZero();
    }

    @Test
    void aFullCacheEvictsOnlyASessionIdleLongEnough() {
        FetchSessions.Session a = sessions.create("c", partitions("a"));
        clock.advance(Duration.ofSeconds(10));
        FetchSessions.Session b = sessions.create("c", partitions("b"));
        // Both used within the eviction time: no slot, the third client does full fetches (session id 0).
        assertThat(sessions.create("c", partitions("c"))).isNull();
        assertThat(sessions.size()).isEqualTo(2);

        clock.advance(Duration.ofSeconds(115)); // a idle 125 s, b 115 s
        assertThat(sessions.incremental(b.id, 1, "c").error()).isEqualTo(Errors.NONE); // b used again
        FetchSessions.Session c = sessions.create("c", partitions("c"));
        assertThat(c).isNotNull();
        assertThat(sessions.size()).isEqualTo(2);
        // The least recently used one went; its client is told so and starts over with a full fetch.
        assertThat(sessions.incremental(a.id, 1, "c").error()).isEqualTo(Errors.FETCH_SESSION_ID_NOT_FOUND);
        assertThat(sessions.incremental(b.id, 2, "c").error()).isEqualTo(Errors.NONE);
        assertThat(sessions.incremental(c.id, 1, "c").error()).isEqualTo(Errors.NONE);
    }
}
