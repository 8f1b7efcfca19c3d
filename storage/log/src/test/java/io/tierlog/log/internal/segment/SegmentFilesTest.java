package io.tierlog.log.internal.segment;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SegmentFilesTest {
    @TempDir
    Path dir;

    @Test
    void namesAreKafkasTwentyDigitZeroPaddedOffsets() {
        assertThat(SegmentFiles.logName(0)).isEqualTo("00000000000000000000.log");
        assertThat(SegmentFiles.logName(368_769)).isEqualTo("00000000000000368769.log");
        assertThat(SegmentFiles.snapshotName(Long.MAX_VALUE)).isEqualTo("09223372036854775807.snapshot");
        for (long offset = 1; offset > 0 && offset < Long.MAX_VALUE / 7; offset = offset * 7 + 3) {
            assertThat(SegmentFiles.logName(offset)).isEqualTo(String.format("%020d.log", offset));
        }
        assertThatThrownBy(() -> SegmentFiles.logName(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void listingParsesOnlyOurNamesInOffsetOrder() throws IOException {
        for (long base : new long[]{4_096, 0, 1_000_000_000_000L}) {
            Files.createFile(SegmentFiles.log(dir, base));
        }
        Files.createFile(dir.resolve(SegmentFiles.snapshotName(4_100)));
        Files.createFile(dir.resolve("0000000000000000000x.log"));
        Files.createFile(dir.resolve("12.log"));

        assertThat(SegmentFiles.segmentBases(dir)).containsExactly(0L, 4_096L, 1_000_000_000_000L);
        assertThat(SegmentFiles.snapshotOffsets(dir)).containsExactly(4_100L);
        assertThat(SegmentFiles.segmentBases(dir.resolve("missing"))).isEmpty();
    }
}
