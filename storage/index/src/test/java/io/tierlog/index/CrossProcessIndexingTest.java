package io.tierlog.index;

import io.tierlog.log.Position;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.LogFixture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Another JVM appends to the partition (as an ingest Lambda sharing the volume would) while this one indexes:
 * every batch it wrote is indexed and readable through the hints.
 */
@Tag("slow")
class CrossProcessIndexingTest {
    private static final TopicPartition TP = new TopicPartition("shared", 2);
    private static final int OWN_BATCHES = 50;
    private static final int CHILD_BATCHES = 400;
    private static final long SEGMENT_BYTES = 64 * 1024;

    @TempDir
    Path tmp;

    @Test
    void appendsFromAnotherProcessAreIndexedAndReadable() throws Exception {
        Path dataDir = tmp.resolve("data");
        try (LogFixture log = new LogFixture(dataDir, TP, SEGMENT_BYTES, 3);
             LogIndex index = LogIndex.open(tmp.resolve("index"))) {
            log.appendRandom(OWN_BATCHES);
            HotIndexer indexer = new HotIndexer(index, dataDir);
            long ownEnd = indexer.catchUp(TP).offset();

            Path output = tmp.resolve("child.out");
            Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), AppendMain.class.getName(), dataDir.toString(),
                    TP.topic(), String.valueOf(TP.partition()), String.valueOf(CHILD_BATCHES), String.valueOf(SEGMENT_BYTES))
                    .redirectErrorStream(true).redirectOutput(output.toFile()).start();
            TreeSet<Long> endsSeen = new TreeSet<>();
            try {
                // Index while the other process appends; the wait bounds each round, the deadline the whole test.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!child.waitFor(20, TimeUnit.MILLISECONDS)) {
                    endsSeen.add(indexer.catchUp(TP).offset());
                    assertThat(System.nanoTime()).as("child still running after 60 s").isLessThan(deadline);
                }
            } finally {
                child.destroyForcibly();
            }
            assertThat(child.exitValue()).as("child output: %s", Files.readString(output)).isZero();

            Position end = indexer.catchUp(TP);
            assertThat(end.offset()).isEqualTo(ownEnd + 2L * CHILD_BATCHES);
            List<BatchInfo> batches = log.batches();
            assertThat(end).isEqualTo(Expect.endOf(batches));
            assertThat(endsSeen.first()).isGreaterThanOrEqualTo(ownEnd);

            List<Position> entries = ExpectedIndex.entries(batches, HotIndexer.DEFAULT_INDEX_INTERVAL_BYTES);
            for (long offset = ownEnd; offset < end.offset(); offset += 2) {
                assertThat(index.floor(TP, offset)).isEqualTo(Expect.floor(entries, offset));
                ReadResult read = log.reader().read(offset, indexer.hint(TP, offset).orElseThrow(), 1, Integer.MAX_VALUE);
                LogRecord r = read.records().get(0);
                int i = (int) ((offset - ownEnd) / 2);
                assertThat(r.offset()).isEqualTo(offset);
                assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("child-" + i + "-0");
            }
            assertThat(indexer.offsetForTimestamp(TP, 3_000_000_000_000L + 300)).isEqualTo(OptionalLong.of(ownEnd + 600));
        }
    }
}
