package io.tierlog.log;

import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Segment listings reused while their partition directory is unchanged and settled: one {@code stat} instead of a
 * listing; any entry created or removed, or a listing made within the settle time of the last change, lists again.
 */
class SegmentListingsTest {
    @TempDir
    Path dataDir;
    final TopicPartition tp = new TopicPartition("orders", 3);
    final AtomicInteger listings = new AtomicInteger();

    private Path partitionWithSegments(long... bases) throws Exception {
        Path dir = Files.createDirectories(dataDir.resolve(tp.dirName()));
        for (long base : bases) {
            Files.createFile(SegmentFiles.log(dir, base));
        }
        return dir;
    }

    private SegmentListings counting(Clock clock) {
        return new SegmentListings(clock, dir -> {
            listings.incrementAndGet();
            return SegmentFiles.segmentBases(dir);
        });
    }

    @Test
    void anUnchangedSettledDirectoryIsListedOnceAndAnEntryCreatedOrRemovedListsItAgain() throws Exception {
        Path dir = partitionWithSegments(0, 100);
        long changed = Files.getLastModifiedTime(dir).toMillis();
        ManualClock clock = new ManualClock(changed + 5_000);
        SegmentListings reused = counting(clock);

        assertThat(reused.bases(tp, dir)).containsExactly(0L, 100L);
        assertThat(reused.bases(tp, dir)).containsExactly(0L, 100L);
        assertThat(listings).as("the second call only stats the directory").hasValue(1);

        // A roll: the directory's modification time moves to now (the file system's clock), a new version.
        Files.createFile(SegmentFiles.log(dir, 250));
        Files.setLastModifiedTime(dir, FileTime.fromMillis(changed + 1_000));
        assertThat(reused.bases(tp, dir)).containsExactly(0L, 100L, 250L);
        assertThat(listings).hasValue(2);

        // An eviction by another process.
        Files.delete(SegmentFiles.log(dir, 0));
        Files.setLastModifiedTime(dir, FileTime.fromMillis(changed + 2_000));
        assertThat(reused.bases(tp, dir)).containsExactly(100L, 250L);
        assertThat(reused.bases(tp, dir)).containsExactly(100L, 250L);
        assertThat(listings).hasValue(3);
    }

    @Test
    void aListingMadeWithinTheSettleTimeOfTheLastChangeIsMadeAgainUntilItSettles() throws Exception {
        Path dir = partitionWithSegments(0);
        long changed = Files.getLastModifiedTime(dir).toMillis();
        ManualClock clock = new ManualClock(changed + 500);
        SegmentListings reused = counting(clock);

        reused.bases(tp, dir);
        reused.bases(tp, dir);
        assertThat(listings).as("another change within the clock's tick would look the same").hasValue(2);
        clock.advance(Duration.ofSeconds(1));
        reused.bases(tp, dir);
        reused.bases(tp, dir);
        assertThat(listings).as("settled at the third listing, reused at the fourth call").hasValue(3);
    }

    @Test
    void aPartitionWithoutADirectoryHasNoSegments() throws Exception {
        SegmentListings reused = counting(new ManualClock(1_700_000_000_000L));
        Path dir = dataDir.resolve(tp.dirName());
        assertThat(reused.bases(tp, dir)).isEmpty();
        assertThat(listings).hasValue(0);
    }

    /** On this machine's file system, with its own clock: a segment created after a settled listing is seen. */
    @Test
    void aHotLogReusingListingsSeesEverySegmentCreatedAfterItsLastListing() throws Exception {
        Path dir = partitionWithSegments(0);
        Files.setLastModifiedTime(dir, FileTime.fromMillis(System.currentTimeMillis() - 10_000));
        HotLog log = HotLog.reusingSettledListings(dataDir, Clock.systemUTC());
        assertThat(log.segmentBases(tp)).containsExactly(0L);
        for (long base = 10; base <= 50; base += 10) {
            Files.createFile(SegmentFiles.log(dir, base));
            assertThat(log.segmentBases(tp)).last().isEqualTo(base);
        }
        Files.delete(SegmentFiles.log(dir, 0));
        assertThat(log.segmentBases(tp)).first().isEqualTo(10L);
    }
}
