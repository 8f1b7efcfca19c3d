package io.tierlog.service.http;

import io.tierlog.http.MediaTypes;

import java.util.Locale;

/**
 * The binary read format, chosen with {@code Accept: application/vnd.tierlog.record-batches} on fetch and stream:
 * whole Kafka RecordBatch v2 batches back to back, exactly as stored, each checked against its CRC32C on the way
 * out. It spares both sides the per-record JSON work, and any Kafka record-batch decoder reads it. The first
 * batch may begin below the requested offset (batches are never cut), so a client skips records below it, as a
 * Kafka consumer does. A fetch reports the partition's extent in response headers instead of JSON fields.
 */
public final class RecordBatchesMedia {
    public static final String TYPE = MediaTypes.RECORD_BATCHES;
    public static final String NEXT_OFFSET = "Tierlog-Next-Offset";
    public static final String HIGH_WATERMARK = "Tierlog-High-Watermark";
    public static final String LOG_START_OFFSET = "Tierlog-Log-Start-Offset";
    /** A read_committed fetch's last stable offset (api.md, "Fetch"). */
    public static final String LAST_STABLE_OFFSET = "Tierlog-Last-Stable-Offset";

    private RecordBatchesMedia() {
    }

    /**
     * True if an Accept or Content-Type header names this format. JSON stays the answer to every other header (none,
     * {@code *}/*, JSON), so existing clients never receive or send binary by accident.
     */
    public static boolean namedIn(String header) {
        return header != null && header.toLowerCase(Locale.ROOT).contains(TYPE);
    }

    /** The {@code encoding} parameter shapes JSON only; with batches it would be silently ignored, so it is refused. */
    public static void requireNoEncoding(String encoding) {
        if (encoding != null) {
            throw Requests.bad("encoding", "encoding applies to JSON responses only, not to " + TYPE);
        }
    }
}
