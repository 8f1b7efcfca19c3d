package io.tierlog.service.kafka;

import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link BrokerRegistry} over real files: two registries in one directory (as two instances on one hot volume,
 * their node-id locks held by one JVM here), driven by hand with a manual wall clock and a manual monotonic clock.
 */
class BrokerRegistryTest {
    static final Duration LIVENESS = Duration.ofSeconds(3);
    static final Duration SKEW = Duration.ofSeconds(1);

    @TempDir
    Path dir;

    private final ManualClock wall = new ManualClock();
    private final AtomicLong monotonic = new AtomicLong(1_000_000_000L);

    private BrokerRegistry claim(int port) throws Exception {
        return claim(port, null);
    }

    private BrokerRegistry claim(int port, String rack) throws Exception {
        return BrokerRegistry.claim(dir, "127.0.0.1", port, rack, wall, monotonic::get, LIVENESS, SKEW);
    }

    private void advance(Duration d) {
        monotonic.addAndGet(d.toNanos());
        wall.advance(d);
    }

    private static List<Integer> ports(BrokerRegistry r) {
        return r.cluster().live().stream().map(Broker::port).toList();
    }

    @Test
    void instancesTakeDistinctNodeIdsAndSeeEachOther() throws Exception {
        try (BrokerRegistry a = claim(9001); BrokerRegistry b = claim(9002)) {
            assertThat(a.self().nodeId()).isZero();
            assertThat(b.self().nodeId()).isEqualTo(1);
            a.refresh();
            assertThat(ports(a)).containsExactly(9001, 9002);
            assertThat(ports(b)).containsExactly(9001, 9002);
            assertThat(a.cluster().controller().nodeId()).isZero();
        }
    }

    @Test
    void aBrokerThatStopsBeatingIsDroppedAfterTheLivenessTimeoutOnTheObserversClock() throws Exception {
        try (BrokerRegistry a = claim(9001); BrokerRegistry b = claim(9002)) {
            a.refresh(); // a sees b's first beat now
            // b stops beating (killed): only a refreshes from here on.
            advance(LIVENESS);
            a.refresh();
            assertThat(ports(a)).as("within the timeout").containsExactly(9001, 9002);
            advance(Duration.ofMillis(1));
            a.refresh();
            assertThat(ports(a)).as("past the timeout").containsExactly(9001);
            b.refresh(); // b is back (a long pause, not a death): its next beat makes it live again
            a.refresh();
            assertThat(ports(a)).containsExactly(9001, 9002);
        }
    }

    @Test
    void aWallClockBehindDoesNotDropALiveBroker() throws Exception {
        try (BrokerRegistry a = claim(9001); BrokerRegistry b = claim(9002)) {
            for (int i = 0; i < 5; i++) {
                monotonic.addAndGet(LIVENESS.toNanos() / 2);
                wall.advance(Duration.ofHours(-1)); // the wall clock steps back; beats still change
                b.refresh();
                a.refresh();
                assertThat(ports(a)).containsExactly(9001, 9002);
            }
        }
    }

    @Test
    void aStoppedBrokerIsWithdrawnAtOnceAndItsNodeIdIsTakenAgain() throws Exception {
        try (BrokerRegistry a = claim(9001)) {
            BrokerRegistry b = claim(9002);
            a.refresh();
            assertThat(ports(a)).containsExactly(9001, 9002);
            b.close();
            a.refresh();
            assertThat(ports(a)).containsExactly(9001);
            try (BrokerRegistry c = claim(9003)) {
                assertThat(c.self().nodeId()).as("the freed id").isEqualTo(1);
            }
        }
    }

    @Test
    void theFileOfALongDeadInstanceIsNotAdvertisedByOneStartingLater() throws Exception {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("7.json"), "{\"nodeId\":7,\"host\":\"127.0.0.1\",\"port\":9007,"
                + "\"instance\":\"dead\",\"beat\":12,\"beatMs\":" + (wall.millis() - LIVENESS.plus(SKEW).toMillis() - 1)
                + "}");
        Files.writeString(dir.resolve("8.json"), "{\"nodeId\":8,\"host\":\"127.0.0.1\",\"port\":9008,"
                + "\"instance\":\"recent\",\"beat\":3,\"beatMs\":" + wall.millis() + "}");
        try (BrokerRegistry a = claim(9001)) {
            assertThat(ports(a)).as("a recent beat counts until it fails to change").containsExactly(9001, 9008);
            advance(LIVENESS.plusMillis(1));
            a.refresh();
            assertThat(ports(a)).containsExactly(9001);
        }
    }

    @Test
    void leadershipSpreadsOverTheLiveBrokersAndDependsOnlyOnThem() throws Exception {
        try (BrokerRegistry a = claim(9001); BrokerRegistry b = claim(9002)) {
            a.refresh();
            Set<Integer> leaders = new HashSet<>();
            for (int p = 0; p < 6; p++) {
                Broker fromA = a.cluster().leaderOf("orders", p);
                assertThat(b.cluster().leaderOf("orders", p)).as("both instances advertise the same leader")
                        .isEqualTo(fromA);
                leaders.add(fromA.nodeId());
            }
            assertThat(leaders).containsExactlyInAnyOrder(0, 1);
        }
    }

    @Test
    void eachInstanceSeesTheOthersRack() throws Exception {
        try (BrokerRegistry a = claim(9001, "eu-west-1a"); BrokerRegistry b = claim(9002, null)) {
            a.refresh();
            assertThat(a.cluster().live()).extracting(Broker::rack).containsExactly("eu-west-1a", null);
            assertThat(b.cluster().live()).extracting(Broker::rack).containsExactly("eu-west-1a", null);
        }
    }
}
