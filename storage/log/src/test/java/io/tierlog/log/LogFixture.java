package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.topic.TopicConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Test fixture shared by the modules that read the hot log (index, tiering; this module's test-jar): a real hot
 * partition written with {@link PartitionWriter} (fsync never), and brute-force views of it (every batch, every
 * record) read back with {@link PartitionReader}, to check an index or a tier against. Not thread-safe.
 */
public final class LogFixture implements AutoCloseable {
    /** The fixed clock's time, and the base of {@link #appendRandom}'s timestamps. */
    public static final long BASE_TIME = 1_700_000_000_000L;
    /** Small segments so a few hundred records make many of them. */
    public static final TopicConfig SMALL_SEGMENTS = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 4096));

    private final Path dataDir;
    private final TopicPartition tp;
    private final Clock clock;
    private final TopicConfig config;
    private final PartitionWriter writer;
    private final PartitionReader reader;
    private final Random random;
    private long batchesWritten;

    /** Segments of {@code segmentBytes}; {@link #appendRandom} draws from {@code seed}; a fixed clock. */
    public LogFixture(Path dataDir, TopicPartition tp, long segmentBytes, long seed) {
        this(dataDir, tp, Clock.fixed(Instant.ofEpochMilli(BASE_TIME), ZoneOffset.UTC),
                TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, segmentBytes)), seed);
    }

    /** Records stamped with {@code clock}; {@link #SMALL_SEGMENTS} unless an append names a config. */
    public LogFixture(Path dataDir, TopicPartition tp, Clock clock) {
        this(dataDir, tp, clock, SMALL_SEGMENTS, 0);
    }

    private LogFixture(Path dataDir, TopicPartition tp, Clock clock, TopicConfig config, long seed) {
        this.dataDir = dataDir;
        this.tp = tp;
        this.clock = clock;
        this.config = config;
        this.writer = new PartitionWriter(dataDir, tp, FsyncPolicy.NEVER, Duration.ZERO, clock);
        this.reader = new PartitionReader(dataDir, tp);
        this.random = new Random(seed);
    }

    public TopicPartition tp() {
        return tp;
    }

    public TopicConfig config() {
        return config;
    }

    public PartitionWriter writer() {
        return writer;
    }

    /** The fixture's reader, opened once. */
    public PartitionReader reader() {
        return reader;
    }

    /** A new reader, which sees the segments as they are now (after an eviction, say). */
    public PartitionReader freshReader() {
        return new PartitionReader(dataDir, tp);
    }

    /**
     * Appends {@code n} batches of 1-4 records with random values of 0-1000 bytes. Timestamps wander upwards from
     * {@link #BASE_TIME} with jitter of +-2 s, so they are not monotonic; about 1 in 100 records has none (-1).
     */
    public void appendRandom(int n) {
        for (int i = 0; i < n; i++) {
            int count = 1 + random.nextInt(4);
            List<AppendRecord> records = new ArrayList<>(count);
            for (int r = 0; r < count; r++) {
                byte[] value = new byte[random.nextInt(1001)];
                random.nextBytes(value);
                long ts = random.nextInt(100) == 0 ? -1
                        : BASE_TIME + batchesWritten * 10 + random.nextInt(4001) - 2000;
                records.add(new AppendRecord(("k" + batchesWritten).getBytes(StandardCharsets.UTF_8), value, List.of(), ts));
            }
            writer.append(records, ProducerIdentity.NONE, config);
            batchesWritten++;
        }
    }

    /**
     * Appends {@code batches} batches of {@code perBatch} JSON records of about 150 bytes, stamped with the clock,
     * under {@code config}; returns the last offset.
     */
    public long append(int batches, int perBatch, TopicConfig config) {
        long last = -1;
        for (int b = 0; b < batches; b++) {
            List<AppendRecord> records = new ArrayList<>();
            for (int i = 0; i < perBatch; i++) {
                String v = "{\"batch\":" + b + ",\"i\":" + i + ",\"pad\":\"" + "x".repeat(120) + "\"}";
                records.add(new AppendRecord(("k" + i).getBytes(StandardCharsets.UTF_8),
                        v.getBytes(StandardCharsets.UTF_8), List.of(), clock.millis()));
            }
            last = writer.append(records, ProducerIdentity.NONE, config).lastOffset();
            batchesWritten++;
        }
        return last;
    }

    /** Every visible batch, in order, from the oldest hot segment. */
    public List<BatchInfo> batches() {
        List<Long> bases = reader.segmentBases();
        List<BatchInfo> out = new ArrayList<>();
        reader.scan(new Position(bases.get(0), bases.get(0), 0), (info, batch) -> out.add(info));
        return out;
    }

    /** Every visible record (offset and timestamp), in offset order. */
    public List<LogRecord> records() {
        List<Long> bases = reader.segmentBases();
        List<LogRecord> out = new ArrayList<>();
        reader.scan(new Position(bases.get(0), bases.get(0), 0), (info, batch) -> {
            RecordBatchCodec.decode(batch, 0, Integer.MAX_VALUE, out);
            return true;
        });
        return out;
    }

    /** All hot records from {@code from}, read as a consumer reads them (a fresh reader, page by page). */
    public List<LogRecord> readHot(long from) {
        PartitionReader fresh = freshReader();
        List<LogRecord> out = new ArrayList<>();
        long next = from;
        while (true) {
            ReadResult r = fresh.read(next, null, 1000, 1 << 20);
            if (r.records().isEmpty()) {
                return out;
            }
            out.addAll(r.records());
            next = r.nextOffset();
        }
    }

    /**
     * A transactional batch of {@code values} (no keys) as kafka-clients' producer builds it, validated as the
     * produce path does: for {@link PartitionWriter#append(io.tierlog.log.format.ClientBatch, TopicConfig)}, with
     * {@link PartitionWriter#appendMarker} to end its transaction.
     */
    public static io.tierlog.log.format.ClientBatch transactionalBatch(long producerId, int epoch, int sequence,
                                                                       String... values) {
        return TransactionsTest.txnBatch(producerId, epoch, sequence, values);
    }

    /** Brute force: offset of the first record with timestamp >= ts, or -1. */
    public static long firstAtOrAfter(List<LogRecord> records, long ts) {
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
