package io.tierlog.tiering;

import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.JavaProcess;
import io.tierlog.testkit.S3ProxyServer;
import org.apache.kafka.tools.DumpLogSegments;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's own {@code DumpLogSegments --deep-iteration} (kafka-tools 4.4.0, in its own JVM) reads the objects a cold
 * compaction pass uploaded, downloaded from S3 as {@code <base offset>.log} files: every batch valid (its CRC
 * checked), record offsets strictly increasing across the objects, and exactly the records the rules keep (the last
 * of each key, the tombstone within its retention), with their keys and values.
 */
@Tag("slow")
class ColdCompactedDumpLogSegmentsTest {
    static final TopicConfig COMPACT = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 4096,
            TopicConfig.CLEANUP_POLICY, "compact"));
    /** A record line of DumpLogSegments' deep iteration with --print-data-log (a tombstone has no payload). */
    static final Pattern RECORD = Pattern.compile("^\\| offset: (\\d+) .* key: (\\S+)(?: payload: ?(.*))?$");
    static final Pattern BATCH = Pattern.compile("^baseOffset: (\\d+) lastOffset: (\\d+) .*isvalid: (\\w+)");

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

    @Test
    void dumpLogSegmentsReadsTheCompactedColdObjectsAsValidWithTheKeptRecords() throws Exception {
        try (ColdCompactionHarness h = new ColdCompactionHarness(server, tmp, COMPACT)) {
            h.appendVersions(60, 5);
            h.append(List.<String[]>of(new String[]{"gone", "soon"}));
            h.append(List.<String[]>of(new String[]{"gone", null}));
            h.appendVersions(10, 3);
            h.storage.runTieringPass();
            List<LogRecord> expected = ColdCompactionKillTest.compacted(h.readCold());
            int tiered = h.manifest().segments().size();
            assertThat(h.compactor(ColdCompactor.Steps.NONE).compact(h.tp, h.topicConfig).ran()).isTrue();
            Manifest m = h.manifest();
            assertThat(m.segments()).as("compacted objects replaced the tiered segments").hasSizeLessThan(tiered);

            Path dir = Files.createDirectories(tmp.resolve("downloaded"));
            List<String> args = new ArrayList<>(List.of("--deep-iteration", "--print-data-log", "--files"));
            List<String> files = new ArrayList<>();
            for (ColdSegment s : m.segments()) {
                Path f = dir.resolve(String.format("%020d.log", s.baseOffset()));
                Files.write(f, h.store.get(s.segmentKey()));
                files.add(f.toString());
            }
            args.add(String.join(",", files));
            Path out = tmp.resolve("dump.txt");
            Process p = JavaProcess.startLogged(DumpLogSegments.class, out, args.toArray(String[]::new));
            JavaProcess.awaitSuccess(p, 180, out);
            String dump = Files.readString(out);

            List<Long> offsets = new ArrayList<>();
            List<String> records = new ArrayList<>();
            int batches = 0;
            long lastBatchEnd = -1;
            for (String line : dump.split("\n")) {
                Matcher b = BATCH.matcher(line);
                if (b.find()) {
                    batches++;
                    assertThat(b.group(3)).as("batch %s", line).isEqualTo("true");
                    assertThat(Long.parseLong(b.group(1))).as("batches follow each other").isGreaterThan(lastBatchEnd);
                    lastBatchEnd = Long.parseLong(b.group(2));
                }
                Matcher r = RECORD.matcher(line);
                if (r.find()) {
                    offsets.add(Long.parseLong(r.group(1)));
                    records.add(r.group(1) + ":" + r.group(2) + "="
                            + (r.group(3) == null ? "<tombstone>" : r.group(3).trim()));
                }
            }
            assertThat(dump).as(dump).doesNotContain("isvalid: false").doesNotContain("Exception");
            assertThat(batches).as("batches dumped").isEqualTo(h.coldBatchHeaders().size());
            assertThat(offsets).as("record offsets strictly increasing").isSorted().doesNotHaveDuplicates();
            assertThat(records).as("the records the rules keep, as Kafka reads them")
                    .isEqualTo(expected.stream().map(ColdCompactedDumpLogSegmentsTest::render).toList());
        }
    }

    private static String render(LogRecord r) {
        String value = r.value() == null ? "<tombstone>" : new String(r.value(), StandardCharsets.UTF_8);
        return r.offset() + ":" + new String(r.key(), StandardCharsets.UTF_8) + "=" + value;
    }
}
