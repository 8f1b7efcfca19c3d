package io.tierlog.tiering;

import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.testkit.S3ProxyServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A cold pass that dies at each of its steps (after an upload, before the manifest commit, after the commit before
 * any deletion, after dropping expired retired objects before deleting them), then a restart (a new node: nothing
 * cached): the manifest is the old or the new one, the cold log is readable with no record the rules keep lost and
 * no offset twice, and the next passes plus the orphan collector converge on the compacted log with no object left
 * behind.
 */
class ColdCompactionCrashTest {
    static final TopicConfig COMPACT = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 4096,
            TopicConfig.CLEANUP_POLICY, "compact"));

    static S3ProxyServer server;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startServer() {
        server = S3ProxyServer.started();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    /** What the failing pass hit. */
    static final class Crash extends RuntimeException {
        Crash(ColdCompactor.Step step) {
            super("injected failure at " + step);
        }
    }

    @ParameterizedTest
    @EnumSource(ColdCompactor.Step.class)
    void aPassThatDiesAtAnyStepLeavesTheOldOrTheNewLogAndConverges(ColdCompactor.Step failAt) {
        try (ColdCompactionHarness h = new ColdCompactionHarness(server, tmp, COMPACT)) {
            h.appendVersions(40, 5);
            h.append(List.<String[]>of(new String[]{"k9", "only-version"}));
            h.appendVersions(20, 3); // k0..k2 once more, and the segments above sealed
            h.storage.runTieringPass();
            Map<String, String> latest = new HashMap<>();
            List<LogRecord> original = h.readCold();
            original.forEach(r -> latest.put(key(r), new String(r.value(), StandardCharsets.UTF_8)));
            Manifest tiered = h.manifest();

            if (failAt == ColdCompactor.Step.RETIRED_DROPPED) {
                // Reaching this step needs retired objects past their grace: one good pass, then more data and time.
                assertThat(h.compactor(ColdCompactor.Steps.NONE).compact(h.tp, h.topicConfig).ran()).isTrue();
                h.clock.advance(ColdCompactionHarness.GRACE.plusMinutes(1));
            }
            Manifest before = h.manifest();
            ColdCompactor failing = h.compactor((step, tp) -> {
                if (step == failAt) {
                    throw new Crash(step);
                }
            });
            assertThatThrownBy(() -> failing.compact(h.tp, h.topicConfig)).isInstanceOf(Crash.class);

            h.restart();
            Manifest after = h.manifest();
            assertThat(after.coldStart()).isEqualTo(tiered.coldStart());
            assertThat(after.coldEnd()).isEqualTo(tiered.coldEnd());
            if (failAt == ColdCompactor.Step.SEGMENT_UPLOADED || failAt == ColdCompactor.Step.UPLOADED
                    || failAt == ColdCompactor.Step.COMMITTING) {
                assertThat(after).as("not committed: the old manifest").isEqualTo(before);
            } else {
                assertThat(after.version()).as("committed: the new manifest").isGreaterThan(before.version());
            }
            assertReadableAndComplete(h, latest);

            // Convergence: the next pass finishes the work; after the grace nothing unreferenced is left.
            h.compactor(ColdCompactor.Steps.NONE).compact(h.tp, h.topicConfig);
            h.clock.advance(ColdCompactionHarness.GRACE.plusMinutes(1));
            h.compactor(ColdCompactor.Steps.NONE).compact(h.tp, h.topicConfig); // deletes expired retired objects
            h.storage.runOrphanCollection(); // and whatever the failed pass uploaded or left
            List<LogRecord> cold = assertReadableAndComplete(h, latest);
            assertThat(cold).as("one record per key").hasSize(latest.size());
            Manifest end = h.manifest();
            Set<ObjectKey> referenced = new HashSet<>();
            end.segments().forEach(s -> {
                referenced.add(s.segmentKey());
                referenced.add(s.indexKey());
            });
            end.retired().forEach(r -> referenced.add(r.key()));
            assertThat(h.segmentObjects()).containsExactlyInAnyOrderElementsOf(referenced);
            for (ObjectKey k : referenced) {
                assertThat(h.store.head(k)).as("referenced object %s exists", k).isPresent();
            }
        }
    }

    /** The cold log is readable, ordered, without duplicates, and holds every key's latest value. */
    private static List<LogRecord> assertReadableAndComplete(ColdCompactionHarness h, Map<String, String> latest) {
        List<LogRecord> cold = h.readCold();
        assertThat(cold).extracting(LogRecord::offset).isSorted().doesNotHaveDuplicates();
        Map<String, String> seen = new HashMap<>();
        cold.forEach(r -> seen.put(key(r), new String(r.value(), StandardCharsets.UTF_8)));
        assertThat(seen).isEqualTo(latest);
        return cold;
    }

    private static String key(LogRecord r) {
        return new String(r.key(), StandardCharsets.UTF_8);
    }
}
