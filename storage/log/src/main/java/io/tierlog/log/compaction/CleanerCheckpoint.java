package io.tierlog.log.compaction;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.log.io.AtomicFiles;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * A partition's cleaner state, {@code cleaner-checkpoint.json} in its directory (Kafka keeps the same in
 * {@code cleaner-offset-checkpoint}): the offset below which the log has been cleaned, and the earliest delete horizon
 * of a tombstone the cleaner kept, so that a pass runs once it passes even if nothing new was written. Written
 * atomically after a pass; lost or unreadable, it only makes the next pass treat everything as dirty.
 *
 * @param firstDirtyOffset every offset below this was in the range of a completed pass
 * @param nextHorizonMs    the earliest horizon of a kept tombstone, {@link Long#MAX_VALUE} if none
 */
record CleanerCheckpoint(long firstDirtyOffset, long nextHorizonMs) {
    static final String FILE = "cleaner-checkpoint.json";
    private static final ObjectMapper JSON = new ObjectMapper();
    static final CleanerCheckpoint NONE = new CleanerCheckpoint(0, Long.MAX_VALUE);

    static CleanerCheckpoint read(Path partitionDir) {
        try {
            JsonNode node = JSON.readTree(Files.readAllBytes(partitionDir.resolve(FILE)));
            return new CleanerCheckpoint(node.path("firstDirtyOffset").asLong(0),
                    node.path("nextHorizonMs").asLong(Long.MAX_VALUE));
        } catch (NoSuchFileException e) {
            return NONE;
        } catch (IOException | RuntimeException e) {
            return NONE;
        }
    }

    void write(Path partitionDir) {
        try {
            AtomicFiles.replace(partitionDir.resolve(FILE), JSON.writeValueAsBytes(JSON.createObjectNode()
                    .put("firstDirtyOffset", firstDirtyOffset).put("nextHorizonMs", nextHorizonMs)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
