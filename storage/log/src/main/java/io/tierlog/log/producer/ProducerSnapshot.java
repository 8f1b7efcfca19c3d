package io.tierlog.log.producer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.log.io.AtomicFiles;
import io.tierlog.log.segment.SegmentFiles;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A checkpoint of a partition's tail: the log up to {@code nextOffset} ends at byte {@code position} of segment
 * {@code segmentBase}, the producer table as of that point, and when that segment was created (for
 * {@code segment.ms}). Stored as {@code <nextOffset>.snapshot} (JSON) in the partition directory, published
 * atomically, so a process that opens the partition scans only the bytes after the newest checkpoint instead of
 * the whole active segment. A checkpoint is only a shortcut: the scan after it still validates every batch, and a
 * checkpoint that does not match the segments on disk is ignored.
 */
public record ProducerSnapshot(long segmentBase, long position, long nextOffset, long segmentCreatedMs,
                               Map<Long, ProducerStateTable.Entry> producers) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public void writeTo(Path dir) {
        ObjectNode root = JSON.createObjectNode();
        root.put("segmentBase", segmentBase);
        root.put("position", position);
        root.put("nextOffset", nextOffset);
        root.put("segmentCreatedMs", segmentCreatedMs);
        ArrayNode list = root.putArray("producers");
        producers.forEach((id, e) -> {
            ObjectNode p = list.addObject();
            p.put("id", id);
            p.put("epoch", e.epoch());
            p.put("lastSeenMs", e.lastSeenMs());
            ArrayNode batches = p.putArray("batches");
            for (ProducerStateTable.AppendedBatch b : e.batches()) {
                batches.addObject().put("sequence", b.sequence()).put("firstOffset", b.firstOffset())
                        .put("lastOffset", b.lastOffset());
            }
        });
        try {
            AtomicFiles.replace(dir.resolve(SegmentFiles.snapshotName(nextOffset)), JSON.writeValueAsBytes(root));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads a snapshot; empty if the file is missing or unreadable (it is then simply not used). */
    public static Optional<ProducerSnapshot> read(Path dir, long offset) {
        try {
            JsonNode root = JSON.readTree(Files.readAllBytes(dir.resolve(SegmentFiles.snapshotName(offset))));
            Map<Long, ProducerStateTable.Entry> producers = new HashMap<>();
            for (JsonNode p : root.get("producers")) {
                List<ProducerStateTable.AppendedBatch> batches = new ArrayList<>();
                for (JsonNode b : p.get("batches")) {
                    batches.add(new ProducerStateTable.AppendedBatch(b.get("sequence").asInt(),
                            b.get("firstOffset").asLong(), b.get("lastOffset").asLong()));
                }
                JsonNode seen = p.get("lastSeenMs"); // absent in checkpoints written before producers expired
                producers.put(p.get("id").asLong(), new ProducerStateTable.Entry((short) p.get("epoch").asInt(),
                        seen == null ? ProducerStateTable.UNKNOWN_LAST_SEEN : seen.asLong(), batches));
            }
            return Optional.of(new ProducerSnapshot(root.get("segmentBase").asLong(), root.get("position").asLong(),
                    root.get("nextOffset").asLong(), root.get("segmentCreatedMs").asLong(), producers));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
