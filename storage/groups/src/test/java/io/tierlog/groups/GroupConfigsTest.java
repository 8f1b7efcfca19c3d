package io.tierlog.groups;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A group's own configs ({@link GroupConfigs}) on real state files, with a ManualClock. */
class GroupConfigsTest {
    static final long DEFAULT_SESSION = 45_000;
    static final Duration SKEW = Duration.ofSeconds(1);

    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock();
    GroupCoordinator coordinator;

    @BeforeEach
    void setUp() {
        coordinator = coordinatorOn(dir);
    }

    private GroupCoordinator coordinatorOn(Path data) {
        return new GroupCoordinator(new GroupStateStore(data), t -> 4, clock, SKEW);
    }

    private static Heartbeat kafkaJoin(String memberId) {
        return new Heartbeat(memberId, 0, Set.of("orders"), DEFAULT_SESSION, List.of(), "kafka");
    }

    private static Map<String, String> set(String key, String value) {
        Map<String, String> m = new HashMap<>();
        m.put(key, value);
        return m;
    }

    @Test
    void aConsumerProtocolMemberTakesTheGroupsSessionAndIntervalAtItsNextHeartbeat() {
        HeartbeatAnswer before = coordinator.heartbeat("g", kafkaJoin("m1"), JoinRules.CONSUMER_PROTOCOL);
        assertThat(before.heartbeatIntervalMs()).as("the default: a third of 45 s, at most 5 s").isEqualTo(5_000);

        coordinator.alterConfigs("g", Map.of(GroupConfigs.SESSION_TIMEOUT_MS, "12000",
                GroupConfigs.HEARTBEAT_INTERVAL_MS, "2000"), DEFAULT_SESSION);
        HeartbeatAnswer after = coordinator.heartbeat("g", new Heartbeat("m1", before.memberEpoch(),
                null, DEFAULT_SESSION, before.assignment(), "kafka"), JoinRules.CONSUMER_PROTOCOL);
        assertThat(after.heartbeatIntervalMs()).isEqualTo(2_000);

        // The group's 12 s session, not the 45 s the caller passed: silent past it (and the skew), the member is gone.
        clock.advance(Duration.ofMillis(12_000).plus(SKEW).plusMillis(1));
        assertThat(coordinator.describe("g").orElseThrow().members()).as("expired on the group's session").isEmpty();
    }

    @Test
    void membersThatChooseTheirOwnSessionAreNotOverridden() {
        coordinator.alterConfigs("g", Map.of(GroupConfigs.SESSION_TIMEOUT_MS, "2000"), DEFAULT_SESSION);
        HeartbeatAnswer http = coordinator.heartbeat("g",
                new Heartbeat(null, 0, Set.of("orders"), 30_000, List.of(), "http"));
        assertThat(http.heartbeatIntervalMs()).isEqualTo(5_000);
        clock.advance(Duration.ofSeconds(3));
        assertThat(coordinator.describe("g").orElseThrow().members()).as("its own 30 s session").hasSize(1);
    }

    @Test
    void aDeletedKeyGoesBackToTheDefaultAndEveryInstanceSeesTheConfigs() {
        coordinator.alterConfigs("g", Map.of(GroupConfigs.SESSION_TIMEOUT_MS, "20000"), DEFAULT_SESSION);
        GroupCoordinator other = coordinatorOn(dir);
        assertThat(other.configs("g").values()).containsExactly(Map.entry(GroupConfigs.SESSION_TIMEOUT_MS, "20000"));
        assertThat(other.configs("g").sessionTimeoutMs(DEFAULT_SESSION)).isEqualTo(20_000);

        other.alterConfigs("g", set(GroupConfigs.SESSION_TIMEOUT_MS, null), DEFAULT_SESSION);
        assertThat(coordinator.configs("g").values()).isEmpty();
        assertThat(coordinator.configs("g").heartbeatIntervalMs(DEFAULT_SESSION)).isEqualTo(5_000);
        assertThat(coordinator.configs("never-seen")).isEqualTo(GroupConfigs.NONE);
    }

    @Test
    void badValuesAreRefusedNamingTheKeyAndChangeNothing() {
        coordinator.alterConfigs("g", Map.of(GroupConfigs.HEARTBEAT_INTERVAL_MS, "3000"), DEFAULT_SESSION);
        assertRefused(Map.of("consumer.rebalance.timeout.ms", "1"), "consumer.rebalance.timeout.ms");
        assertRefused(Map.of(GroupConfigs.SESSION_TIMEOUT_MS, "soon"), GroupConfigs.SESSION_TIMEOUT_MS);
        assertRefused(Map.of(GroupConfigs.SESSION_TIMEOUT_MS, "999"), GroupConfigs.SESSION_TIMEOUT_MS);
        assertRefused(Map.of(GroupConfigs.SESSION_TIMEOUT_MS, String.valueOf(GroupCoordinator.MAX_SESSION_TIMEOUT_MS + 1)),
                GroupConfigs.SESSION_TIMEOUT_MS);
        assertRefused(Map.of(GroupConfigs.HEARTBEAT_INTERVAL_MS, "50"), GroupConfigs.HEARTBEAT_INTERVAL_MS);
        // 3 s interval stored: a session at or below it is refused, as is an interval at the default session.
        assertRefused(Map.of(GroupConfigs.SESSION_TIMEOUT_MS, "3000"), GroupConfigs.HEARTBEAT_INTERVAL_MS);
        assertRefused(Map.of(GroupConfigs.HEARTBEAT_INTERVAL_MS, "45000"), GroupConfigs.HEARTBEAT_INTERVAL_MS);
        assertThat(coordinator.configs("g").values())
                .containsExactly(Map.entry(GroupConfigs.HEARTBEAT_INTERVAL_MS, "3000"));
    }

    private void assertRefused(Map<String, String> changes, String key) {
        assertThatThrownBy(() -> coordinator.alterConfigs("g", changes, DEFAULT_SESSION))
                .isInstanceOfSatisfying(TierlogException.class, e -> {
                    assertThat(e.type()).isEqualTo(ErrorType.INVALID_CONFIG);
                    assertThat(e.extra()).containsEntry("key", key);
                });
    }

    @Test
    void aGroupWithOnlyConfigsCanBeDeletedAndItsConfigsGoWithIt() {
        coordinator.alterConfigs("g", Map.of(GroupConfigs.SESSION_TIMEOUT_MS, "20000"), DEFAULT_SESSION);
        coordinator.delete("g", () -> false);
        assertThat(coordinator.configs("g")).isEqualTo(GroupConfigs.NONE);
        assertThatThrownBy(() -> coordinator.delete("g", () -> false)).isInstanceOfSatisfying(TierlogException.class,
                e -> assertThat(e.type()).isEqualTo(ErrorType.UNKNOWN_GROUP));
    }
}
