package io.tierlog.log.internal.producer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.log.io.AtomicFiles;
import io.tierlog.log.internal.segment.SegmentFiles;

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
 *
 * <p>Format {@value #VERSION} ({@code "version": 3}) adds a producer's open transaction, {@code txnFirstOffset}
 * (absent: none), and {@code newestTxnEnd} (absent: none known; checkpoints written while the index was forced
 * before each one lack it); format 2 checkpoints load as producers without open transactions (written before
 * transactions were accepted). Format 2 ({@code "version": 2}) holds Kafka-numbered sequence ranges per retained batch
 * ({@code firstSequence}, {@code lastSequence}) and a producer's {@code legacy} mark. A checkpoint without a version
 * was written when a sequence counted requests: each batch's {@code sequence} is read as the range
 * {@code sequence .. sequence + records - 1} (what a retry of that request brings now) and every producer in it is
 * legacy ({@link ProducerStateTable}, "Entries of unknown numbering").
 */
public record ProducerSnapshot(long segmentBase, long position, long nextOffset, long segmentCreatedMs,
                               Map<Long, ProducerStateTable.Entry> producers, long newestTxnEnd, int version) {
    /** {@link #newestTxnEnd} when the index held no END, or when the checkpoint predates the field. */
    public static final long NO_TXN_END = -1;
    /** The format written; checkpoints without a version field are format 1 (per-request sequences). */
    public static final int VERSION = 3;
    /** The format before transactions: read as producers without open transactions. */
    static final int VERSION_WITHOUT_TXNS = 2;
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * A checkpoint of the current format, of the log up to {@code nextOffset}; {@code newestTxnEnd} is the offset of
     * the newest marker the partition's transaction index held an END for ({@link #NO_TXN_END}: none). The index is
     * not forced before a checkpoint is published, so after an OS crash the checkpoint may have survived and index
     * entries before it not; recovery compares the two and then starts from an older point that replays the markers
     * ({@code LogRecovery}).
     */
    public ProducerSnapshot(long segmentBase, long position, long nextOffset, long segmentCreatedMs,
                            Map<Long, ProducerStateTable.Entry> producers, long newestTxnEnd) {
        this(segmentBase, position, nextOffset, segmentCreatedMs, producers, newestTxnEnd, VERSION);
    }

    /**
     * True for a checkpoint written when sequences counted requests (format 1): the batches after it in the log may
     * be numbered so too.
     */
    public boolean perRequestSequences() {
        return version == 1;
    }

    /**
     * Publishes this snapshot in {@code dir}; {@code durable} forces it (and its directory entry) to stable storage
     * first. A snapshot only shortens recovery's scan ({@link #read} skips one that does not parse), so one that a
     * machine loss takes costs a longer scan from an older snapshot, never state.
     */
    public void writeTo(Path dir, boolean durable) {
        ObjectNode root = JSON.createObjectNode();
        root.put("version", VERSION);
        root.put("segmentBase", segmentBase);
        root.put("position", position);
        root.put("nextOffset", nextOffset);
        root.put("segmentCreatedMs", segmentCreatedMs);
        if (newestTxnEnd != NO_TXN_END) {
            root.put("newestTxnEnd", newestTxnEnd);
        }
        ArrayNode list = root.putArray("producers");
        producers.forEach((id, e) -> {
            ObjectNode p = list.addObject();
            p.put("id", id);
            p.put("epoch", e.epoch());
            p.put("lastSeenMs", e.lastSeenMs());
            if (e.legacy()) {
                p.put("legacy", true);
            }
            if (e.txnFirstOffset() != ProducerStateTable.NO_TXN) {
                p.put("txnFirstOffset", e.txnFirstOffset());
            }
            ArrayNode batches = p.putArray("batches");
            for (ProducerStateTable.AppendedBatch b : e.batches()) {
                batches.addObject().put("firstSequence", b.firstSequence()).put("lastSequence", b.lastSequence())
                        .put("firstOffset", b.firstOffset()).put("lastOffset", b.lastOffset());
            }
        });
        try {
            Path file = dir.resolve(SegmentFiles.snapshotName(nextOffset));
            byte[] bytes = JSON.writeValueAsBytes(root);
            if (durable) {
                AtomicFiles.replace(file, bytes);
            } else {
                AtomicFiles.replaceUnforced(file, bytes);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads a snapshot; empty if the file is missing or unreadable (it is then simply not used). */
    public static Optional<ProducerSnapshot> read(Path dir, long offset) {
        try {
            JsonNode root = JSON.readTree(Files.readAllBytes(dir.resolve(SegmentFiles.snapshotName(offset))));
            JsonNode version = root.get("version");
            boolean perRequest = version == null; // format 1: a sequence counted requests
            if (!perRequest && version.asInt() != VERSION && version.asInt() != VERSION_WITHOUT_TXNS) {
                return Optional.empty(); // a format this code does not know: rebuild from the log instead
            }
            Map<Long, ProducerStateTable.Entry> producers = new HashMap<>();
            for (JsonNode p : root.get("producers")) {
                List<ProducerStateTable.AppendedBatch> batches = new ArrayList<>();
                for (JsonNode b : p.get("batches")) {
                    long first = b.get("firstOffset").asLong();
                    long last = b.get("lastOffset").asLong();
                    int firstSeq = (perRequest ? b.get("sequence") : b.get("firstSequence")).asInt();
                    int lastSeq = perRequest ? ProducerStateTable.incrementSequence(firstSeq, (int) (last - first))
                            : b.get("lastSequence").asInt();
                    batches.add(new ProducerStateTable.AppendedBatch(firstSeq, lastSeq, first, last));
                }
                JsonNode seen = p.get("lastSeenMs"); // absent in checkpoints written before producers expired
                boolean legacy = perRequest || p.path("legacy").asBoolean(false);
                long txnFirstOffset = p.path("txnFirstOffset").asLong(ProducerStateTable.NO_TXN);
                producers.put(p.get("id").asLong(), new ProducerStateTable.Entry((short) p.get("epoch").asInt(),
                        seen == null ? ProducerStateTable.UNKNOWN_LAST_SEEN : seen.asLong(), legacy, batches,
                        txnFirstOffset));
            }
            return Optional.of(new ProducerSnapshot(root.get("segmentBase").asLong(), root.get("position").asLong(),
                    root.get("nextOffset").asLong(), root.get("segmentCreatedMs").asLong(), producers,
                    root.path("newestTxnEnd").asLong(NO_TXN_END), perRequest ? 1 : version.asInt()));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
