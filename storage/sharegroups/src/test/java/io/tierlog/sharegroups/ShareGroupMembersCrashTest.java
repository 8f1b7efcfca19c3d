package io.tierlog.sharegroups;

import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.testkit.JavaProcess;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A process joining members one after another is killed with SIGKILL mid-way (possibly inside a write, holding the
 * group's lock): every join it answered is in the members file with the epoch it answered, the file is whole, and
 * a new instance takes the lock and goes on.
 */
@Tag("slow")
class ShareGroupMembersCrashTest {
    @TempDir
    Path dir;

    @Test
    void everyAnsweredJoinSurvivesAKillOfTheProcess() throws Exception {
        new TopicStore(dir, Clock.systemUTC()).create("t", 2, TopicConfig.DEFAULTS);
        Path log = dir.resolve("member.log");
        Process p = JavaProcess.startLogged(ShareMemberMain.class, log, dir.toString());
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (answered(log).size() < 30 && p.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(20); // another process's progress: no latch crosses processes
            }
            assertThat(answered(log)).as("the process answered joins; its log: %s", Files.readString(log))
                    .hasSizeGreaterThanOrEqualTo(30);
        } finally {
            p.destroyForcibly().waitFor();
        }
        // Everything the process printed before the kill, to the last line.
        Map<String, Integer> answered = answered(log);

        ShareGroupMembers restarted = new ShareGroupMembers(dir, new TopicStore(dir, Clock.systemUTC())::find,
                Clock.systemUTC(), Duration.ofSeconds(45), Duration.ofSeconds(5), Duration.ofSeconds(1));
        Map<String, Integer> stored = restarted.describe("g").orElseThrow().members().stream()
                .collect(Collectors.toMap(ShareMembersDescription.Member::memberId,
                        ShareMembersDescription.Member::memberEpoch));
        assertThat(stored).containsAllEntriesOf(answered);
        String last = answered.keySet().stream().max((a, b) -> Integer.compare(answered.get(a), answered.get(b)))
                .orElseThrow();
        assertThat(restarted.heartbeat("g", last, answered.get(last), null, "after", null).assignment())
                .containsExactly(ShareGroupMembersTest.all("t", 2));
        assertThat(restarted.heartbeat("g", "newcomer", 0, List.of("t"), "after", null).memberEpoch())
                .isGreaterThan(answered.get(last));
    }

    /** member → epoch of each join the process answered; a line cut short by the kill (no "ok") is not counted. */
    private static Map<String, Integer> answered(Path log) throws IOException {
        Map<String, Integer> answered = new TreeMap<>();
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
            String[] f = line.split(" ");
            if (f.length == 3 && f[2].equals("ok")) {
                answered.put(f[0], Integer.parseInt(f[1]));
            }
        }
        return answered;
    }
}
