package io.tierlog.tiering;

import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.testkit.JavaProcess;
import io.tierlog.testkit.S3ProxyServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kills a real cold-compaction process with SIGKILL in the middle of a pass against S3 (the embedded S3Proxy, over
 * HTTP from the child JVM): between a compacted object's upload and its sidecar's, after the first and the second
 * compacted upload (object and sidecar), just before the manifest write, just
 * after it, and after dropping expired retired objects from the manifest before deleting them. Then, as after a
 * restart (a new node, nothing cached):
 * <ul>
 *   <li>the cold log is exactly the original one (nothing committed) or exactly the compacted one (committed):
 *       never a mix, no offset missing or twice, every key's latest value readable;</li>
 *   <li>a reader that loaded the manifest before the kill reads the whole log it saw, also after the next pass
 *       committed over it;</li>
 *   <li>a pass finishes the work, and after the grace the orphan collector and the next pass leave exactly the
 *       objects the manifest references (the dead pass's uploads collected).</li>
 * </ul>
 * {@link ColdCompactionCrashTest} covers the same steps with exceptions in one JVM; this one proves that nothing
 * the dead process held in memory or had half-sent matters.
 */
@Tag("slow")
class ColdCompactionKillTest {
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

    @ParameterizedTest(name = "kill -9 at {0} #{1}")
    @CsvSource({"SEGMENT_UPLOADED,1", "UPLOADED,1", "UPLOADED,2", "COMMITTING,1", "COMMITTED,1",
            "RETIRED_DROPPED,1"})
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void aKilledColdPassLeavesTheOldOrTheNewLogAndTheNextPassFinishes(ColdCompactor.Step step, int occurrence)
            throws Exception {
        try (ColdCompactionHarness h = new ColdCompactionHarness(server, tmp, COMPACT)) {
            h.appendVersions(150, 5);
            h.append(List.<String[]>of(new String[]{"k9", "only-version"}, new String[]{"gone", "soon"}));
            h.append(List.<String[]>of(new String[]{"gone", null})); // a tombstone (kept: within delete.retention.ms)
            h.appendVersions(20, 3); // k0..k2 once more, and the segments above sealed
            h.storage.runTieringPass();
            List<LogRecord> original = h.readCold();
            List<String> expected = render(compacted(original));
            assertThat(expected).hasSizeLessThan(original.size());

            if (step == ColdCompactor.Step.RETIRED_DROPPED) {
                // Reaching this step needs retired objects past their grace: one good pass, then time.
                assertThat(h.compactor(ColdCompactor.Steps.NONE, 1).compact(h.tp, h.topicConfig).ran()).isTrue();
                h.clock.advance(ColdCompactionHarness.GRACE.plusMinutes(1));
            }
            List<String> before = render(h.readCold());
            Manifest manifestBefore = h.manifest();
            // A reader in flight: it loads the manifest now and keeps it (its clock does not move until it is done).
            TieredStorage inFlight = h.openStorage();
            try {
                assertThat(inFlight.manifests().load(h.tp)).isEqualTo(manifestBefore);

                String killedAt = killChildAt(h, step, occurrence);
                assertThat(killedAt).isEqualTo(step + " " + occurrence);

                h.restart();
                Manifest after = h.manifest();
                List<String> cold = render(h.readCold());
                assertThat(after.coldStart()).isEqualTo(manifestBefore.coldStart());
                assertThat(after.coldEnd()).isEqualTo(manifestBefore.coldEnd());
                assertDenseInOrder(h.readCold());
                if (step == ColdCompactor.Step.SEGMENT_UPLOADED || step == ColdCompactor.Step.UPLOADED
                        || step == ColdCompactor.Step.COMMITTING) {
                    assertThat(after).as("not committed: the old manifest").isEqualTo(manifestBefore);
                    assertThat(cold).as("not committed: the old log, record for record").isEqualTo(before);
                } else {
                    assertThat(after.version()).as("committed: a new manifest").isGreaterThan(manifestBefore.version());
                    assertThat(cold).as("committed: the compacted log, record for record").isEqualTo(expected);
                }
                assertThat(latestValues(h.readCold())).isEqualTo(latestValues(original));

                // The next pass (this process) finishes; the reader in flight still reads the log it loaded.
                h.compactor(ColdCompactor.Steps.NONE, 2).compact(h.tp, h.topicConfig);
                assertThat(render(h.readCold())).isEqualTo(expected);
                assertThat(render(readAll(inFlight, h, manifestBefore))).as("a reader on the old manifest")
                        .isEqualTo(before);
            } finally {
                inFlight.close();
            }

            // After the grace: retired objects deleted by a pass, the dead pass's uploads by the orphan collector.
            h.clock.advance(ColdCompactionHarness.GRACE.plusMinutes(1));
            h.compactor(ColdCompactor.Steps.NONE, 3).compact(h.tp, h.topicConfig);
            h.storage.runOrphanCollection();
            assertThat(render(h.readCold())).isEqualTo(expected);
            assertThat(h.coldBatchHeaders()).as("every batch valid").isNotEmpty();
            Manifest end = h.manifest();
            assertThat(end.retired()).isEmpty();
            Set<ObjectKey> referenced = new HashSet<>();
            end.segments().forEach(s -> {
                referenced.add(s.segmentKey());
                referenced.add(s.indexKey());
            });
            assertThat(h.segmentObjects()).as("no object of the dead pass left behind")
                    .containsExactlyInAnyOrderElementsOf(referenced);
        }
    }

    /**
     * Runs one cold pass in a child JVM, waits until it reaches the step, and kills it with SIGKILL. A child whose
     * pass ended early on a transient S3 error (the embedded S3Proxy dropped a request; a real pass is simply run
     * again by the next one) is started again, at most twice.
     */
    private String killChildAt(ColdCompactionHarness h, ColdCompactor.Step step, int occurrence) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return killOneChildAt(h, step, occurrence, attempt);
            } catch (AssertionError e) {
                if (attempt >= 3 || !String.valueOf(e.getMessage()).contains("ObjectStoreUnavailableException")) {
                    throw e;
                }
            }
        }
    }

    private String killOneChildAt(ColdCompactionHarness h, ColdCompactor.Step step, int occurrence, int attempt)
            throws Exception {
        Path stderr = tmp.resolve("child-" + step + "-" + occurrence + "-" + attempt + ".txt");
        Process p = JavaProcess.start(ColdCompactionKillMain.class, stderr, server.endpoint().toString(), h.bucket,
                h.dataDir.toString(), h.tp.topic(), String.valueOf(h.clock.millis()), step.name(),
                String.valueOf(occurrence), String.valueOf(System.nanoTime()));
        String line;
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            line = out.readLine();
            assertThat(line).as("the child reached %s #%d; stderr: %s", step, occurrence, read(stderr))
                    .isNotNull().startsWith("at ");
        } finally {
            p.destroyForcibly();
        }
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("killed by SIGKILL at %s", step).isEqualTo(128 + 9);
        return line.substring(3);
    }

    /** Everything from the cold start to the cold end through one node's reader, without reloading its manifest. */
    private static List<LogRecord> readAll(TieredStorage node, ColdCompactionHarness h, Manifest m) {
        List<LogRecord> out = new ArrayList<>();
        long next = m.coldStart();
        while (next < m.coldEnd()) {
            var r = node.reader().read(h.tp, next, 500, 1 << 20);
            r.records().stream().filter(rec -> rec.offset() < m.coldEnd()).forEach(out::add);
            assertThat(r.nextOffset()).as("read at %d advances", next).isGreaterThan(next);
            next = r.nextOffset();
        }
        return out;
    }

    /** The model of one full pass: the last record of each key (tombstones within their retention kept). */
    static List<LogRecord> compacted(List<LogRecord> log) {
        Map<String, Long> latest = new HashMap<>();
        log.forEach(r -> latest.put(key(r), r.offset()));
        return log.stream().filter(r -> latest.get(key(r)) == r.offset()).toList();
    }

    static Map<String, String> latestValues(List<LogRecord> log) {
        Map<String, String> out = new HashMap<>();
        for (LogRecord r : log) {
            out.put(key(r), r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
        }
        return out;
    }

    private static void assertDenseInOrder(List<LogRecord> log) {
        assertThat(log).extracting(LogRecord::offset).isSorted().doesNotHaveDuplicates();
    }

    /** offset:key=value, one string per record, so a mismatch shows which record differs. */
    private static List<String> render(List<LogRecord> log) {
        return log.stream().map(r -> r.offset() + ":" + key(r) + "="
                + (r.value() == null ? "<tombstone>" : new String(r.value(), StandardCharsets.UTF_8))).toList();
    }

    private static String key(LogRecord r) {
        return new String(r.key(), StandardCharsets.UTF_8);
    }

    private static String read(Path p) throws IOException {
        return Files.exists(p) ? Files.readString(p) : "";
    }
}
