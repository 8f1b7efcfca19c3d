package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.time.Duration;
import java.util.Map;

/**
 * Share groups on short timers, for the tests that wait on them in real time: a waiting lease's fallback recheck far
 * beyond any wait (so only the wakeups under test can answer it), 100 ms of clock-skew allowance, and 2-second record
 * locks for Kafka share consumers.
 */
public class ShareTimersProfile implements QuarkusTestProfile {
    public static final Duration KAFKA_RECORD_LOCK = Duration.ofSeconds(2);

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("tierlog.share.long-poll-recheck", "10m", "tierlog.groups.max-clock-skew", "100ms",
                "tierlog.kafka.share-record-lock-duration", KAFKA_RECORD_LOCK.toSeconds() + "s");
    }
}
