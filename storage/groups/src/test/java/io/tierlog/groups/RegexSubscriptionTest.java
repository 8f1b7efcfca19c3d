package io.tierlog.groups;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Subscriptions by regular expression (Kafka's SubscriptionPattern): the member's expression is kept in the group's
 * state and resolved on each of its heartbeats, so a topic created later joins the subscription with no word from
 * the client, on any instance; named topics add to it. Real state files, a ManualClock.
 */
class RegexSubscriptionTest {
    static final long SESSION = 10_000;

    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock();
    /** The topics that exist, as the listener's topic store would list them. */
    final Set<String> existing = new TreeSet<>(Set.of("orders-eu", "orders-us", "payments"));
    final RegexTopics resolver = regex -> existing.stream().filter(Pattern.compile(regex).asMatchPredicate())
            .collect(java.util.stream.Collectors.toSet());
    GroupCoordinator coordinator;

    @BeforeEach
    void setUp() {
        coordinator = coordinatorOnTheVolume();
    }

    private GroupCoordinator coordinatorOnTheVolume() {
        return new GroupCoordinator(new GroupStateStore(dir), t -> 2, clock, Duration.ofSeconds(1));
    }

    private HeartbeatAnswer beat(GroupCoordinator c, HeartbeatAnswer last, Set<String> topics, String regex) {
        return c.heartbeat("g", new Heartbeat(last.memberId(), last.memberEpoch(), topics, SESSION,
                last.assignment(), "c", null, regex), JoinRules.CLIENT_IDS, resolver);
    }

    private HeartbeatAnswer join(String regex) {
        return coordinator.heartbeat("g", new Heartbeat("m-1", 0, Set.of(), SESSION, List.of(), "c", null, regex),
                JoinRules.CLIENT_IDS, resolver);
    }

    private Set<String> subscription() {
        return coordinator.describe("g").orElseThrow().members().get(0).topics();
    }

    @Test
    void theExpressionIsResolvedOnJoinAndATopicCreatedLaterJoinsOnTheNextHeartbeat() {
        HeartbeatAnswer a = join("orders-.*");
        assertThat(subscription()).containsExactlyInAnyOrder("orders-eu", "orders-us");
        assertThat(coordinator.describe("g").orElseThrow().members().get(0).topicRegex()).isEqualTo("orders-.*");
        a = beat(coordinator, a, null, null);
        assertThat(a.assignment()).extracting(TopicPartitions::topic).containsOnly("orders-eu", "orders-us");

        existing.add("orders-apac");
        // The client sends nothing new (its fields are sent only when they change); another instance answers.
        HeartbeatAnswer b = beat(coordinatorOnTheVolume(), a, null, null);
        assertThat(subscription()).containsExactlyInAnyOrder("orders-eu", "orders-us", "orders-apac");
        b = beat(coordinator, b, null, null);
        assertThat(b.assignment()).extracting(TopicPartitions::topic).contains("orders-apac");
    }

    @Test
    void namedTopicsAddToTheExpressionAndAnEmptyExpressionDropsIt() {
        HeartbeatAnswer a = join("orders-eu");
        a = beat(coordinator, a, Set.of("payments"), null);
        assertThat(subscription()).containsExactlyInAnyOrder("orders-eu", "payments");
        a = beat(coordinator, a, null, "");
        assertThat(subscription()).containsExactly("payments");
        assertThat(coordinator.describe("g").orElseThrow().members().get(0).topicRegex()).isNull();
    }

    @Test
    void aCallerThatCannotResolveExpressionsKeepsWhatTheyMatched() {
        HeartbeatAnswer a = join("orders-.*");
        coordinator.heartbeat("g", new Heartbeat(a.memberId(), a.memberEpoch(), null, SESSION, a.assignment(), "c"),
                JoinRules.CLIENT_IDS);
        assertThat(subscription()).containsExactlyInAnyOrder("orders-eu", "orders-us");
    }

    @Test
    void anOverlongExpressionIsRefusedNamingTheFieldAndChangesNothing() {
        join("orders-.*");
        String tooLong = "a".repeat(GroupCoordinator.MAX_TOPIC_REGEX_CHARS + 1);
        assertThatThrownBy(() -> coordinator.heartbeat("g", new Heartbeat("m-2", 0, Set.of(), SESSION, List.of(), "c",
                null, tooLong), JoinRules.CLIENT_IDS, resolver))
                .isInstanceOfSatisfying(TierlogException.class, e -> {
                    assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
                    assertThat(e.extra()).containsEntry("field", "topicRegex");
                });
        assertThat(coordinator.describe("g").orElseThrow().members()).hasSize(1);
    }
}
