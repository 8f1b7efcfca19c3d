package io.tierlog.index;

import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.Position;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.topic.TopicConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A real hot log written with {@link PartitionWriter}, and brute-force views of it (every batch, every record)
 * read back with {@link PartitionReader} to check the index against.
 */
final class LogFixture implements AutoCloseable {
    static final long BASE_TIME = 1_700_000_000_000L;
    private static final Clock CLOCK = Clock.fixed(Instant.ofEpochMilli(BASE_TIME), ZoneOffset.UTC);

    final TopicPartition tp;
    final TopicConfig config;
    final PartitionWriter writer;
    final PartitionReader reader;
    private final Random random;
    private long batchesWritten;

    LogFixture(java.nio.file.Path dataDir, TopicPartition tp, long segmentBytes, long seed) {
        this.tp = tp;
        this.config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, segmentBytes));
        this.writer = new PartitionWriter(dataDir, tp, FsyncPolicy.NEVER, Duration.ZERO, CLOCK);
        this.reader = new PartitionReader(dataDir, tp);
        this.random = new Random(seed);
    }

    /**
     * Appends {@code n} batches of 1-4 records with values of 0-1000 bytes. Timestamps wander upwards with
     * jitter of +-2 s, so they are not monotonic; about 1 in 100 records has no timestamp (-1).
     */
    void appendRandom(int n) {
        for (int i = 0; i < n; i++) {
            int count = 1 + random.nextInt(4);
            List<AppendRecord> records = new ArrayList<>(count);
            for (int r = 0; r < count; r++) {
                byte[] value = new byte[random.nextInt(1001)];
                random.nextBytes(value);
                long ts = random.nextInt(100) == 0 ? -1
                        : BASE_TIME + batchesWritten * 10 + random.nextInt(4001) - 2000;
                records.add(new AppendRecord(("k" + batchesWritten).getBytes(), value, List.of(), ts));
            }
            writer.append(records, ProducerIdentity.NONE, config);
            batchesWritten++;
        }
    }

    /** Every visible batch, in order, from the oldest hot segment. */
    List<BatchInfo> batches() {
        List<Long> bases = reader.segmentBases();
        List<BatchInfo> out = new ArrayList<>();
        reader.scan(new Position(bases.get(0), bases.get(0), 0), (info, batch) -> out.add(info));
        return out;
    }

    /** Every visible record (offset and timestamp), in offset order. */
    List<LogRecord> records() {
        List<Long> bases = reader.segmentBases();
        List<LogRecord> out = new ArrayList<>();
        reader.scan(new Position(bases.get(0), bases.get(0), 0), (info, batch) -> {
            RecordBatchCodec.decode(batch, 0, Integer.MAX_VALUE, out);
            return true;
        });
        return out;
    }

    /** The offset entries the documented rule produces for {@code batches} with the given interval. */
    static List<Position> expectedEntries(List<BatchInfo> batches, int intervalBytes) {
        List<Position> entries = new ArrayList<>();
        long bytesSince = 0;
        for (BatchInfo b : batches) {
            if (b.position() == 0 || bytesSince >= intervalBytes) {
                entries.add(new Position(b.baseOffset(), b.segmentBase(), b.position()));
                bytesSince = 0;
            }
            bytesSince += b.sizeInBytes();
        }
        return entries;
    }

    /** Brute force: offset of the first record with timestamp >= ts, or -1. */
    static long firstAtOrAfter(List<LogRecord> records, long ts) {
        for (LogRecord r : records) {
            if (r.timestamp() >= ts) {
                return r.offset();
            }
        }
        return -1;
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
