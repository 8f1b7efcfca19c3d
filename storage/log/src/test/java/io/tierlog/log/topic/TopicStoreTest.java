package io.tierlog.log.topic;

import io.tierlog.log.io.FileVersion;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Two stores on one directory stand for two processes sharing the hot volume. */
class TopicStoreTest {
    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @Test
    void anotherProcesssChangeIsSeenAtOnceAndAnUnchangedFileIsNotParsedAgain() {
        TopicStore writer = new TopicStore(data, clock);
        TopicStore reader = new TopicStore(data, clock);
        TopicMetadata created = writer.create("orders", 8, TopicConfig.DEFAULTS);

        TopicMetadata first = reader.get("orders");
        assertThat(first).isEqualTo(created);
        assertThat(reader.get("orders")).as("same bytes, same parse").isSameAs(first);

        writer.updateConfig("orders", Map.of(TopicConfig.RETENTION_MS, 172_800_000L));
        assertThat(reader.get("orders").config().retentionMs()).isEqualTo(172_800_000L);

        // Deleted and created again, with the same size of file: a different topic, not the remembered one.
        writer.delete("orders");
        assertThat(reader.find("orders")).isEmpty();
        TopicMetadata again = writer.create("orders", 9, TopicConfig.DEFAULTS);
        assertThat(reader.get("orders")).isEqualTo(again);
        assertThat(reader.get("orders").id()).isNotEqualTo(created.id());
        assertThat(reader.get("orders").partitions()).isEqualTo(9);
    }

    @Test
    void compactionConfigSurvivesTheFileAndOldFilesReadAsDelete() throws Exception {
        TopicStore store = new TopicStore(data, clock);
        store.create("table", 1, TopicConfig.DEFAULTS.with(Map.of(TopicConfig.CLEANUP_POLICY, "compact",
                TopicConfig.MIN_CLEANABLE_DIRTY_RATIO, 0.1)));
        TopicConfig read = new TopicStore(data, clock).get("table").config();
        assertThat(read.cleanupPolicy()).isEqualTo("compact");
        assertThat(read.minCleanableDirtyRatio()).isEqualTo(0.1);
        store.updateConfig("table", Map.of(TopicConfig.CLEANUP_POLICY, "delete,compact"));
        assertThat(new TopicStore(data, clock).get("table").config().cleanupPolicy()).isEqualTo("compact,delete");

        // A topic file written before compaction existed has no such keys: Kafka's defaults apply.
        java.nio.file.Files.writeString(data.resolve("__metadata/topics/legacy.json"), """
                {"name": "legacy", "id": "7f1d8a36-3a7e-4b55-9d45-0d2f7c9a1b11", "partitions": 1,
                 "createdAtMs": 1, "config": {"retention.ms": 1000}}""");
        TopicConfig legacy = store.get("legacy").config();
        assertThat(legacy.retentionMs()).isEqualTo(1000);
        assertThat(legacy.cleanupPolicy()).isEqualTo("delete");
        assertThat(legacy.messageTimestampType()).isEqualTo("CreateTime");
    }

    @Test
    void theTimestampTypeSurvivesTheFile() {
        TopicStore store = new TopicStore(data, clock);
        store.create("audit", 1, TopicConfig.DEFAULTS.with(Map.of(TopicConfig.MESSAGE_TIMESTAMP_TYPE, "LogAppendTime")));
        assertThat(new TopicStore(data, clock).get("audit").config().logAppendTime()).isTrue();
        store.updateConfig("audit", Map.of(TopicConfig.MESSAGE_TIMESTAMP_TYPE, "CreateTime"));
        assertThat(new TopicStore(data, clock).get("audit").config().logAppendTime()).isFalse();
    }

    @Test
    void namesListsEveryTopicSortedAndSkipsFilesThatAreNoTopic() throws Exception {
        TopicStore store = new TopicStore(data, clock);
        store.create("zeta", 1, TopicConfig.DEFAULTS);
        store.create("alpha", 2, TopicConfig.DEFAULTS);
        java.nio.file.Files.writeString(data.resolve("__metadata/topics/not a topic.json"), "{}");
        java.nio.file.Files.writeString(data.resolve("__metadata/topics/alpha.json.tmp"), "{}");
        assertThat(store.names()).containsExactly("alpha", "zeta");
        assertThat(store.list()).extracting(TopicMetadata::name).containsExactly("alpha", "zeta");
    }

    @Test
    void aSettledVersionIsTakenFromItsStatWithoutReadingTheFile() throws Exception {
        TopicStore writer = new TopicStore(data, clock);
        TopicStore reader = new TopicStore(data, clock);
        writer.create("orders", 8, TopicConfig.DEFAULTS);
        FileTime written = FileTime.fromMillis(clock.millis() - FileVersion.SETTLE.toMillis());
        Path file = setModified("orders", written);
        assertThat(reader.get("orders").partitions()).isEqualTo(8);

        // Other bytes under the same inode, size and time: a write the store never makes (it replaces files whole),
        // here to show that the settled version's stat is all the reader looks at.
        rewriteInPlace(file, "\"partitions\":8", "\"partitions\":9", written);
        assertThat(reader.get("orders").partitions()).as("the parse kept with the version").isEqualTo(8);
        assertThat(new TopicStore(data, clock).get("orders").partitions()).as("a new reader").isEqualTo(9);
    }

    @Test
    void aVersionReadWithinTheSettleTimeOfItsWriteIsReadAgainAtEveryCall() throws Exception {
        // Two replacements within one tick of the file system's clock can leave the same inode (freed and reused),
        // size and time: a version read less than SETTLE after it was written is not trusted.
        TopicStore writer = new TopicStore(data, clock);
        TopicStore reader = new TopicStore(data, clock);
        writer.create("orders", 8, TopicConfig.DEFAULTS);
        FileTime written = FileTime.fromMillis(clock.millis() - 10);
        Path file = setModified("orders", written);
        assertThat(reader.get("orders").partitions()).isEqualTo(8);

        rewriteInPlace(file, "\"partitions\":8", "\"partitions\":9", written);
        assertThat(reader.get("orders").partitions()).isEqualTo(9);
        clock.advance(FileVersion.SETTLE);
        assertThat(reader.get("orders").partitions()).as("read again once settled, then trusted").isEqualTo(9);
        rewriteInPlace(file, "\"partitions\":9", "\"partitions\":7", written);
        assertThat(reader.get("orders").partitions()).isEqualTo(9);
    }

    private Path setModified(String topic, FileTime time) throws Exception {
        Path file = data.resolve("__metadata/topics/" + topic + ".json");
        Files.setLastModifiedTime(file, time);
        return file;
    }

    private static void rewriteInPlace(Path file, String from, String to, FileTime time) throws Exception {
        String json = Files.readString(file).replace(" ", "").replace("\n", "");
        assertThat(json).contains(from);
        String changed = json.replace(from, to);
        String padded = changed + " ".repeat((int) Files.size(file) - changed.length());
        Files.write(file, padded.getBytes(StandardCharsets.UTF_8), StandardOpenOption.TRUNCATE_EXISTING);
        Files.setLastModifiedTime(file, time);
    }
}
