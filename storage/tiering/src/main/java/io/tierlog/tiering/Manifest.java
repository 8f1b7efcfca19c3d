package io.tierlog.tiering;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.objectstore.ObjectKey;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One version of a partition's cold-tier manifest: the committed cold segments, contiguous and ascending, and
 * the partition's {@code logStartOffset}. Version 0 is the implicit empty manifest of a partition that has
 * never been tiered (it is never stored). Immutable; every change makes a new version.
 *
 * <h2>JSON (stored as {@code manifest/<version 20d>.json})</h2>
 * <pre>
 * {"format": 1, "version": 7, "logStartOffset": 0,
 *  "segments": [{"baseOffset": 0, "lastOffset": 999, "sizeBytes": 1048000, "firstTimestamp": 1732867200000,
 *                "maxTimestamp": 1732867260000, "segmentKey": "t/0/segments/000…0-ab12….log",
 *                "indexKey": "t/0/segments/000…0-ab12….index", "crc32c": -12345, "committedAtMs": 1732867300000}],
 *  "cleaner": {"cleanedEnd": 500, "nextHorizonMs": 1732953600000},
 *  "retired": [{"key": "t/0/segments/000…0-cd34….log", "retiredAtMs": 1732867400000}]}
 * </pre>
 * {@code cleaner} and {@code retired} are written by the cold cleaner ({@link ColdCompactor}) and absent before its
 * first pass: the cleaner's checkpoint, and the objects a compaction replaced, still kept for readers that loaded an
 * older version until their grace has passed (see {@link #references}). Every change carries both forward.
 */
public record Manifest(long version, long logStartOffset, List<ColdSegment> segments, Cleaner cleaner,
                       List<Retired> retired) {
    static final int FORMAT = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    public static final Manifest EMPTY = new Manifest(0, 0, List.of());

    /**
     * The cold cleaner's checkpoint: offsets below {@code cleanedEnd} were compacted by a completed pass (each key
     * occurs there at most once), and {@code nextHorizonMs} is the earliest delete horizon of a tombstone kept.
     */
    public record Cleaner(long cleanedEnd, long nextHorizonMs) {
        public static final Cleaner NONE = new Cleaner(0, Long.MAX_VALUE);
    }

    /** An object a compaction replaced, and when: deleted once {@code retiredAtMs} is older than the grace. */
    public record Retired(ObjectKey key, long retiredAtMs) {
    }

    public Manifest(long version, long logStartOffset, List<ColdSegment> segments) {
        this(version, logStartOffset, segments, Cleaner.NONE, List.of());
    }

    public Manifest {
        segments = List.copyOf(segments);
        retired = List.copyOf(retired);
        Objects.requireNonNull(cleaner, "cleaner");
        for (int i = 1; i < segments.size(); i++) {
            if (segments.get(i).baseOffset() != segments.get(i - 1).nextOffset()) {
                throw new IllegalArgumentException("manifest v" + version + ": segment " + segments.get(i).baseOffset()
                        + " does not follow " + segments.get(i - 1).lastOffset());
            }
        }
        if (!segments.isEmpty() && logStartOffset > segments.get(0).baseOffset()) {
            throw new IllegalArgumentException("manifest v" + version + ": logStartOffset " + logStartOffset
                    + " above the first cold segment " + segments.get(0).baseOffset());
        }
    }

    public boolean isEmpty() {
        return segments.isEmpty();
    }

    /** The offset after the last cold record; {@code logStartOffset} when there is no cold segment. */
    public long coldEnd() {
        return segments.isEmpty() ? logStartOffset : segments.get(segments.size() - 1).nextOffset();
    }

    /** The first cold offset, or {@link #coldEnd()} when empty. */
    public long coldStart() {
        return segments.isEmpty() ? logStartOffset : segments.get(0).baseOffset();
    }

    public long totalBytes() {
        long sum = 0;
        for (ColdSegment s : segments) {
            sum += s.sizeBytes();
        }
        return sum;
    }

    /** The cold segment holding {@code offset}. */
    public Optional<ColdSegment> segmentFor(long offset) {
        int i = segmentIndexFor(offset);
        return i < 0 ? Optional.empty() : Optional.of(segments.get(i));
    }

    /** The index in {@link #segments()} of the cold segment holding {@code offset}, or -1 (binary search). */
    public int segmentIndexFor(long offset) {
        int lo = 0;
        int hi = segments.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            ColdSegment s = segments.get(mid);
            if (offset < s.baseOffset()) {
                hi = mid - 1;
            } else if (offset > s.lastOffset()) {
                lo = mid + 1;
            } else {
                return mid;
            }
        }
        return -1;
    }

    /**
     * True if this manifest references {@code key} as a segment or a sidecar, or still keeps it as {@link #retired()}
     * (so the orphan collector leaves it to readers of older versions).
     */
    public boolean references(ObjectKey key) {
        for (ColdSegment s : segments) {
            if (s.segmentKey().equals(key) || s.indexKey().equals(key)) {
                return true;
            }
        }
        for (Retired r : retired) {
            if (r.key().equals(key)) {
                return true;
            }
        }
        return false;
    }

    /** This manifest plus {@code segment} at the end, as the next version. */
    Manifest append(ColdSegment segment) {
        if (segment.baseOffset() < coldEnd()) {
            throw new IllegalArgumentException("segment " + segment.baseOffset() + " overlaps the cold tier ending at "
                    + coldEnd());
        }
        List<ColdSegment> next = new ArrayList<>(segments);
        next.add(segment);
        // The first cold segment defines where the log starts; a later one must follow on (checked above and by
        // the constructor's contiguity rule).
        long start = segments.isEmpty() ? segment.baseOffset() : logStartOffset;
        return new Manifest(version + 1, start, next, cleaner, retired);
    }

    /**
     * The next version of an empty manifest, starting at {@code next}: the cold tier moves past offsets deleted
     * (DeleteRecords) before they were uploaded, which are never uploaded.
     */
    Manifest skipTo(long next) {
        if (!segments.isEmpty() || next <= coldEnd()) {
            throw new IllegalArgumentException("cannot skip to " + next + ": the cold tier ends at " + coldEnd()
                    + " with " + segments.size() + " segments");
        }
        return new Manifest(version + 1, next, segments, cleaner, retired);
    }

    /** The next version without the first {@code count} segments, with logStartOffset moved past them. */
    Manifest dropOldest(int count) {
        List<ColdSegment> rest = segments.subList(count, segments.size());
        long start = rest.isEmpty() ? coldEnd() : rest.get(0).baseOffset();
        return new Manifest(version + 1, Math.max(start, logStartOffset), rest, cleaner, retired);
    }

    byte[] toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("format", FORMAT);
        root.put("version", version);
        root.put("logStartOffset", logStartOffset);
        ArrayNode array = root.putArray("segments");
        for (ColdSegment s : segments) {
            ObjectNode n = array.addObject();
            n.put("baseOffset", s.baseOffset());
            n.put("lastOffset", s.lastOffset());
            n.put("sizeBytes", s.sizeBytes());
            n.put("firstTimestamp", s.firstTimestamp());
            n.put("maxTimestamp", s.maxTimestamp());
            n.put("segmentKey", s.segmentKey().value());
            n.put("indexKey", s.indexKey().value());
            n.put("crc32c", s.crc32c());
            n.put("committedAtMs", s.committedAtMs());
        }
        if (!cleaner.equals(Cleaner.NONE)) {
            ObjectNode c = root.putObject("cleaner");
            c.put("cleanedEnd", cleaner.cleanedEnd());
            c.put("nextHorizonMs", cleaner.nextHorizonMs());
        }
        if (!retired.isEmpty()) {
            ArrayNode r = root.putArray("retired");
            for (Retired x : retired) {
                r.addObject().put("key", x.key().value()).put("retiredAtMs", x.retiredAtMs());
            }
        }
        try {
            return JSON.writeValueAsBytes(root);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Parses a stored manifest; {@link IllegalArgumentException} if it is not one this code understands. */
    static Manifest fromJson(byte[] bytes) {
        try {
            JsonNode root = JSON.readTree(bytes);
            int format = root.path("format").asInt(-1);
            if (format != FORMAT) {
                throw new IllegalArgumentException("manifest format " + format + " is not " + FORMAT);
            }
            List<ColdSegment> segments = new ArrayList<>();
            for (JsonNode n : root.path("segments")) {
                segments.add(new ColdSegment(n.get("baseOffset").asLong(), n.get("lastOffset").asLong(),
                        n.get("sizeBytes").asLong(), n.path("firstTimestamp").asLong(-1),
                        n.get("maxTimestamp").asLong(), ObjectKey.of(n.get("segmentKey").asText()),
                        ObjectKey.of(n.get("indexKey").asText()), n.get("crc32c").asInt(),
                        n.get("committedAtMs").asLong()));
            }
            JsonNode c = root.path("cleaner");
            Cleaner cleaner = c.isObject()
                    ? new Cleaner(c.get("cleanedEnd").asLong(), c.get("nextHorizonMs").asLong()) : Cleaner.NONE;
            List<Retired> retired = new ArrayList<>();
            for (JsonNode r : root.path("retired")) {
                retired.add(new Retired(ObjectKey.of(r.get("key").asText()), r.get("retiredAtMs").asLong()));
            }
            return new Manifest(root.get("version").asLong(), root.get("logStartOffset").asLong(), segments, cleaner,
                    retired);
        } catch (IOException | NullPointerException e) {
            throw new IllegalArgumentException("unreadable manifest: " + e, e);
        }
    }
}
