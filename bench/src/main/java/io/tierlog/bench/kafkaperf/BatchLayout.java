package io.tierlog.bench.kafkaperf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * How a topic's records lie in record batches on a server's disk: the batches and records of every
 * {@code <topic>-<partition>/*.log} segment under a log directory (Kafka's {@code log.dirs} and Tierlog's hot
 * directory both keep Kafka's v2 batches back to back in such files). A consumer's fetches and per-batch work depend
 * on it, so the two servers must be consumed from the same layout.
 */
record BatchLayout(long batches, long records, long bytes) {
    static final BatchLayout NONE = new BatchLayout(0, 0, 0);
    /** baseOffset (8), batchLength (4), ..., lastOffsetDelta at byte 23 (4). */
    private static final int HEADER = 27;

    double meanBatchBytes() {
        return batches == 0 ? Double.NaN : (double) bytes / batches;
    }

    /** The layout of {@code topic}'s partitions under {@code logDir}; NONE where there is no such directory. */
    static BatchLayout of(Path logDir, String topic, int partitions) {
        BatchLayout sum = NONE;
        for (int p = 0; p < partitions; p++) {
            Path dir = logDir.resolve(topic + "-" + p);
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (DirectoryStream<Path> logs = Files.newDirectoryStream(dir, "*.log")) {
                for (Path log : logs) {
                    sum = sum.plus(ofSegment(log));
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list " + dir, e);
            }
        }
        return sum;
    }

    /** Walks the batch headers of one segment file, up to its end or the first header that does not fit. */
    static BatchLayout ofSegment(Path log) {
        long batches = 0;
        long records = 0;
        long bytes = 0;
        ByteBuffer header = ByteBuffer.allocate(HEADER);
        try (FileChannel ch = FileChannel.open(log, StandardOpenOption.READ)) {
            long size = ch.size();
            long position = 0;
            while (position + HEADER <= size) {
                header.clear();
                while (header.hasRemaining() && ch.read(header, position + header.position()) > 0) {
                    // read the whole header
                }
                int length = header.getInt(8);
                long batchBytes = 12L + length;
                if (length <= 0 || position + batchBytes > size) {
                    break; // preallocated or torn tail
                }
                batches++;
                records += header.getInt(23) + 1L;
                bytes += batchBytes;
                position += batchBytes;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + log, e);
        }
        return new BatchLayout(batches, records, bytes);
    }

    private BatchLayout plus(BatchLayout o) {
        return new BatchLayout(batches + o.batches, records + o.records, bytes + o.bytes);
    }
}
