package io.tierlog.client;

import java.time.Duration;
import java.util.Objects;

/**
 * The consumer's settings; immutable, each {@code withX} returns a copy. Meanings in docs/client.md.
 *
 * @param groupId            the consumer group (null: no group; only {@link Consumer#assign} then, and no commits)
 * @param clientId           shown in the group's description
 * @param autoOffsetReset    where a partition without a committed offset (or whose position fell out of the log)
 *                           starts
 * @param autoCommit         for a subscribed consumer: commit the positions of returned records every
 *                           {@code autoCommitInterval}, before a revocation and on close (at-least-once); a consumer
 *                           assigned by hand commits only when told to
 * @param autoCommitInterval see {@code autoCommit}
 * @param sessionTimeout     the group member's session: without a heartbeat for this long it is expired
 * @param maxPollRecords     records one {@code poll} returns at most
 * @param fetchMaxBytes      bytes one fetch of one partition asks for at most
 * @param fetchMaxWait       the longest long-poll of one fetch (at most 30 s); {@code poll} waits its own timeout
 * @param recordBatches      fetch Kafka record batches (faster) rather than JSON
 * @param isolation          what the consumer sees of Kafka transactions (Kafka's {@code isolation.level})
 */
public record ConsumerConfig(String groupId, String clientId, OffsetReset autoOffsetReset, boolean autoCommit,
                             Duration autoCommitInterval, Duration sessionTimeout, int maxPollRecords,
                             int fetchMaxBytes, Duration fetchMaxWait, boolean recordBatches, Isolation isolation) {
    /** Kafka's {@code auto.offset.reset}: the log's start, its end, or fail the {@code poll}. */
    public enum OffsetReset { EARLIEST, LATEST, NONE }

    /**
     * Kafka's {@code isolation.level}: every data record, or only those of committed transactions, up to the last
     * stable offset (the records of Kafka transactional producers; others are always committed).
     */
    public enum Isolation { READ_UNCOMMITTED, READ_COMMITTED }

    public ConsumerConfig {
        Objects.requireNonNull(autoOffsetReset, "autoOffsetReset");
        Objects.requireNonNull(isolation, "isolation");
        if (maxPollRecords < 1 || fetchMaxBytes < 1) {
            throw new IllegalArgumentException("maxPollRecords and fetchMaxBytes must be >= 1");
        }
        if (fetchMaxWait.toMillis() > 30_000) {
            throw new IllegalArgumentException("fetchMaxWait is at most 30 s (the service's waitMs limit)");
        }
    }

    /** No group, earliest, auto-commit on (it does nothing without a group). */
    public static ConsumerConfig defaults() {
        return new ConsumerConfig(null, "tierlog-java", OffsetReset.EARLIEST, true, Duration.ofSeconds(5),
                Duration.ofSeconds(10), 500, 1024 * 1024, Duration.ofSeconds(5), true, Isolation.READ_UNCOMMITTED);
    }

    public static ConsumerConfig group(String groupId) {
        return defaults().withGroup(groupId);
    }

    public ConsumerConfig withGroup(String v) {
        return new ConsumerConfig(v, clientId, autoOffsetReset, autoCommit, autoCommitInterval, sessionTimeout,
                maxPollRecords, fetchMaxBytes, fetchMaxWait, recordBatches, isolation);
    }

    public ConsumerConfig withClientId(String v) {
        return new ConsumerConfig(groupId, v, autoOffsetReset, autoCommit, autoCommitInterval, sessionTimeout,
                maxPollRecords, fetchMaxBytes, fetchMaxWait, recordBatches, isolation);
    }

    public ConsumerConfig withAutoOffsetReset(OffsetReset v) {
        return new ConsumerConfig(groupId, clientId, v, autoCommit, autoCommitInterval, sessionTimeout,
                maxPollRecords, fetchMaxBytes, fetchMaxWait, recordBatches, isolation);
    }

    public ConsumerConfig withAutoCommit(boolean v) {
        return new ConsumerConfig(groupId, clientId, autoOffsetReset, v, autoCommitInterval, sessionTimeout,
                maxPollRecords, fetchMaxBytes, fetchMaxWait, recordBatches, isolation);
    }

    public ConsumerConfig withAutoCommitInterval(Duration v) {
        return new ConsumerConfig(groupId, clientId, autoOffsetReset, autoCommit, v, sessionTimeout,
                maxPollRecords, fetchMaxBytes, fetchMaxWait, recordBatches, isolation);
    }

    public ConsumerConfig withSessionTimeout(Duration v) {
        return new ConsumerConfig(groupId, clientId, autoOffsetReset, autoCommit, autoCommitInterval, v,
                maxPollRecords, fetchMaxBytes, fetchMaxWait, recordBatches, isolation);
    }

    public ConsumerConfig withMaxPollRecords(int v) {
        return new ConsumerConfig(groupId, clientId, autoOffsetReset, autoCommit, autoCommitInterval, sessionTimeout,
                v, fetchMaxBytes, fetchMaxWait, recordBatches, isolation);
    }

    public ConsumerConfig withFetchMaxBytes(int v) {
        return new ConsumerConfig(groupId, clientId, autoOffsetReset, autoCommit, autoCommitInterval, sessionTimeout,
                maxPollRecords, v, fetchMaxWait, recordBatches, isolation);
    }

    public ConsumerConfig withFetchMaxWait(Duration v) {
        return new ConsumerConfig(groupId, clientId, autoOffsetReset, autoCommit, autoCommitInterval, sessionTimeout,
                maxPollRecords, fetchMaxBytes, v, recordBatches, isolation);
    }

    public ConsumerConfig withRecordBatches(boolean v) {
        return new ConsumerConfig(groupId, clientId, autoOffsetReset, autoCommit, autoCommitInterval, sessionTimeout,
                maxPollRecords, fetchMaxBytes, fetchMaxWait, v, isolation);
    }

    public ConsumerConfig withIsolation(Isolation v) {
        return new ConsumerConfig(groupId, clientId, autoOffsetReset, autoCommit, autoCommitInterval, sessionTimeout,
                maxPollRecords, fetchMaxBytes, fetchMaxWait, recordBatches, v);
    }
}
