package io.tierlog.tiering;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing of the cold tier's stored formats, as a node reads them back from the bucket: a manifest
 * ({@link Manifest#fromJson}) and a segment sidecar ({@link SegmentSidecar#fromBytes}, versions 1 and 2). Whatever the bytes, each
 * parser answers {@link IllegalArgumentException} (the documented "not a valid one") or a value that writes back to
 * bytes it parses to the same value; any other exception is a finding (a reader would fail in an unplanned way on a
 * damaged object).
 *
 * <p>The corpora ({@code ManifestAndSidecarJazzerTestInputs}) hold manifests and sidecars this code wrote; they run as
 * regression tests in every build. Fuzzing: docs/RELIABILITY.md, "Fuzzing".
 */
class ManifestAndSidecarJazzerTest {
    /** The dictionary hands the fuzzer the manifest's field names, so that it builds documents the parser walks deep. */
    @FuzzTest(maxDuration = "2m")
    @DictionaryEntries({"\"format\":1", "\"version\":", "\"logStartOffset\":", "\"segments\":[",
            "\"baseOffset\":", "\"lastOffset\":", "\"sizeBytes\":", "\"firstTimestamp\":", "\"maxTimestamp\":",
            "\"segmentKey\":\"", "\"indexKey\":\"", "\"crc32c\":", "\"committedAtMs\":",
            "\"cleaner\":{", "\"cleanedEnd\":", "\"nextHorizonMs\":", "\"retired\":[", "\"key\":\"",
            "\"retiredAtMs\":", "/segments/", ".log\"", ".index\"", "-1", "9223372036854775807", "null", "{}", "[]"})
    void manifestParsesOrIsRefused(byte[] json) {
        Manifest manifest;
        try {
            manifest = Manifest.fromJson(json);
        } catch (IllegalArgumentException refused) {
            return;
        }
        assertThat(Manifest.fromJson(manifest.toJson())).isEqualTo(manifest);
    }

    /**
     * Input: one flag byte, then the sidecar. Flag bit 0 set: the trailing CRC32C is recomputed first, so that the
     * fuzzer reaches the checks behind the checksum.
     */
    @FuzzTest(maxDuration = "2m")
    void sidecarParsesOrIsRefused(byte[] input) {
        if (input.length == 0) {
            return;
        }
        byte[] bytes = Arrays.copyOfRange(input, 1, input.length);
        if ((input[0] & 1) != 0 && bytes.length >= 4) {
            CRC32C crc = new CRC32C();
            crc.update(bytes, 0, bytes.length - 4);
            ByteBuffer.wrap(bytes).putInt(bytes.length - 4, (int) crc.getValue());
        }
        SegmentSidecar sidecar;
        try {
            sidecar = SegmentSidecar.fromBytes(bytes);
        } catch (IllegalArgumentException refused) {
            return;
        }
        if (ByteBuffer.wrap(bytes).getShort(4) == SegmentSidecar.VERSION_WITHOUT_ABORTED) {
            // A version 1 sidecar has no aborted transactions; it is written back as version 2.
            assertThat(sidecar.aborted()).isEmpty();
        } else {
            assertThat(sidecar.toBytes()).isEqualTo(bytes);
        }
        assertThat(SegmentSidecar.fromBytes(sidecar.toBytes())).isEqualTo(sidecar);
    }
}
