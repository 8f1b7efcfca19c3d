package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.Map;

/**
 * Participants that append one line per marker ({@code M <pid> <epoch> C|A <topic-partition>}) and per offset
 * ({@code O <group> <topic-partition> <offset>}) to a file shared by processes: a write(2) in append mode, so a
 * process killed with SIGKILL leaves every line it wrote whole (the page cache keeps it).
 */
final class FileParticipants implements TransactionParticipants {
    private final Path log;

    FileParticipants(Path log) {
        this.log = log;
    }

    @Override
    public void writeMarkers(long producerId, short producerEpoch, boolean commit, Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            append("M " + producerId + " " + producerEpoch + " " + (commit ? "C" : "A") + " " + tp + "\n");
        }
    }

    @Override
    public void commitOffsets(String groupId, Map<TopicPartition, PendingOffset> offsets) {
        offsets.forEach((tp, o) -> append("O " + groupId + " " + tp + " " + o.offset() + "\n"));
    }

    private void append(String line) {
        try {
            Files.writeString(log, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
