package io.tierlog.tiering;

import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Test fixture: appends to a real hot partition and reads it back. */
final class HotLog implements AutoCloseable {
    /** Small segments so a few hundred records make many of them. */
    static final TopicConfig SMALL_SEGMENTS = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 4096));

    private final Path dataDir;
    private final TopicPartition tp;
    private final Clock clock;
    private final PartitionWriter writer;

    HotLog(Path dataDir, TopicPartition tp, Clock clock) {
        this.dataDir = dataDir;
        this.tp = tp;
        this.clock = clock;
        this.writer = new PartitionWriter(dataDir, tp, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
    }

    /** Appends {@code batches} batches of {@code perBatch} records stamped with the clock; returns the last offset. */
    long append(int batches, int perBatch, TopicConfig config) {
        long last = -1;
        for (int b = 0; b < batches; b++) {
            List<AppendRecord> records = new ArrayList<>();
            for (int i = 0; i < perBatch; i++) {
                String v = "{\"batch\":" + b + ",\"i\":" + i + ",\"pad\":\"" + "x".repeat(120) + "\"}";
                records.add(new AppendRecord(("k" + i).getBytes(StandardCharsets.UTF_8),
                        v.getBytes(StandardCharsets.UTF_8), List.of(), clock.millis()));
            }
            last = writer.append(records, ProducerIdentity.NONE, config).lastOffset();
        }
        return last;
    }

    PartitionReader reader() {
        return new PartitionReader(dataDir, tp);
    }

    /** All hot records from {@code from}. */
    List<LogRecord> readHot(long from) {
        List<LogRecord> out = new ArrayList<>();
        long next = from;
        while (true) {
            ReadResult r = reader().read(next, null, 1000, 1 << 20);
            if (r.records().isEmpty()) {
                return out;
            }
            out.addAll(r.records());
            next = r.nextOffset();
        }
    }

    @Override
    public void close() {
        try {
            writer.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
