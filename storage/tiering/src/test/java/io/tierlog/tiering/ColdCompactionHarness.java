package io.tierlog.tiering;

import io.tierlog.log.HotLog;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.compaction.KeyMap;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.s3.NoExpectContinueInterceptor;
import io.tierlog.objectstore.s3.S3ObjectStore;
import io.tierlog.testkit.ManualClock;
import io.tierlog.testkit.S3ProxyServer;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * One partition of a compacted topic with a hot volume, a real S3 bucket (the embedded S3Proxy, over HTTP) and a
 * {@link TieredStorage} over both, plus what the cold-compaction tests read back: the cold log through the cold
 * reader, the batch headers of the cold objects, and the S3 requests the proxy received (counted per HTTP request
 * the client sent it, retries included). Not thread-safe.
 */
final class ColdCompactionHarness implements AutoCloseable {
    static final Duration GRACE = Duration.ofHours(1);
    static final TieringConfig CONFIG = TieringConfig.DEFAULTS.withOrphanGrace(GRACE);
    private static final AtomicInteger BUCKETS = new AtomicInteger();

    final TopicPartition tp = new TopicPartition("table", 0);
    // Starts at the real time: S3Proxy stamps objects with it, and the orphan collector compares the two.
    final ManualClock clock = new ManualClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
    final Path dataDir;
    final Path root;
    final String bucket;
    final S3ProxyServer server;
    final Map<String, LongAdder> requests = new ConcurrentHashMap<>();
    final S3ObjectStore store;
    final TopicStore topics;
    final TieringConfig config = CONFIG;
    TopicConfig topicConfig;
    TieredStorage storage;
    final PartitionWriter writer;

    ColdCompactionHarness(S3ProxyServer server, Path root, TopicConfig topicConfig) {
        this.server = server;
        this.root = root;
        this.dataDir = root.resolve("hot");
        this.bucket = "cold-compaction-" + BUCKETS.incrementAndGet();
        server.createBucket(bucket);
        this.store = new S3ObjectStore(countingClient(), bucket, "cluster");
        this.topics = new TopicStore(dataDir, clock);
        this.topicConfig = topicConfig;
        topics.create(tp.topic(), 1, topicConfig);
        this.storage = openStorage();
        this.writer = new HotLog(dataDir).writer(tp, FsyncPolicy.NEVER, Duration.ZERO, clock);
    }

    /** A new node over the same volume and bucket: nothing cached, as after a restart. */
    TieredStorage openStorage() {
        return new TieredStorage(dataDir, root.resolve("cache-" + BUCKETS.incrementAndGet()), store, config, clock,
                new Random(7), SegmentEvictionListener.NONE);
    }

    /** Restarts the node: the old {@link TieredStorage} is closed and a new one opened. */
    void restart() {
        storage.close();
        storage = openStorage();
    }

    ColdCompactor compactor(ColdCompactor.Steps steps) {
        return compactor(steps, 11);
    }

    /** A cold compactor whose upload ids come from {@code seed} (passes that must not reuse each other's keys). */
    ColdCompactor compactor(ColdCompactor.Steps steps, long seed) {
        return compactor(steps, seed, KeyMap.DEFAULT_BUDGET_BYTES);
    }

    /** A cold compactor whose key map holds about {@code keyMapBytes} per pass ({@link KeyMap}). */
    ColdCompactor compactor(ColdCompactor.Steps steps, long seed, long keyMapBytes) {
        return new ColdCompactor(topics, storage.attributedStore(), storage.manifests(), new TopicGuards(), config,
                new ColdCompactionStats(), clock, new Random(seed), steps, keyMapBytes);
    }

    void setConfig(Map<String, ?> changes) {
        topicConfig = topics.updateConfig(tp.topic(), changes).config();
    }

    /** Appends one batch of {@code key -> value} records (a null value is a tombstone); returns its base offset. */
    long append(List<String[]> keyValues) {
        List<AppendRecord> records = new ArrayList<>();
        for (String[] kv : keyValues) {
            records.add(new AppendRecord(kv[0].getBytes(StandardCharsets.UTF_8),
                    kv[1] == null ? null : kv[1].getBytes(StandardCharsets.UTF_8), List.of(), clock.millis()));
        }
        return writer.append(records, ProducerIdentity.NONE, topicConfig).baseOffset();
    }

    /** Appends {@code batches} batches of {@code perBatch} records over keys k0..k(perBatch-1). */
    void appendVersions(int batches, int perBatch) {
        for (int b = 0; b < batches; b++) {
            List<String[]> kvs = new ArrayList<>();
            for (int i = 0; i < perBatch; i++) {
                kvs.add(new String[]{"k" + i, "v" + b + "-" + "x".repeat(100)});
            }
            append(kvs);
        }
    }

    Manifest manifest() {
        return storage.manifests().load(tp);
    }

    /** Every record of the cold tier, from its start to its end, read page by page as a consumer reads. */
    List<LogRecord> readCold() {
        Manifest m = manifest();
        return readCold(m.coldStart(), m.coldEnd(), Integer.MAX_VALUE);
    }

    /** Cold records from {@code from} until {@code end}, at most about {@code max} of them. */
    List<LogRecord> readCold(long from, long end, int max) {
        List<LogRecord> out = new ArrayList<>();
        long next = from;
        while (next < end && out.size() < max) {
            ReadResult r = storage.reader().read(tp, next, 500, 1 << 20);
            for (LogRecord rec : r.records()) {
                if (rec.offset() < end) {
                    out.add(rec);
                }
            }
            if (r.nextOffset() <= next) {
                throw new AssertionError("cold read at " + next + " did not advance");
            }
            next = r.nextOffset();
        }
        return out;
    }

    /** Hot records from {@code from}, read as a consumer reads them. */
    List<LogRecord> readHot(long from, int max) {
        PartitionReader reader = new HotLog(dataDir).reader(tp);
        List<LogRecord> out = new ArrayList<>();
        long next = from;
        while (out.size() < max) {
            ReadResult r = reader.read(next, null, 500, 1 << 20);
            if (r.records().isEmpty()) {
                return out;
            }
            out.addAll(r.records());
            next = r.nextOffset();
        }
        return out;
    }

    /** The header facts of every batch of every cold object, in offset order (what producer state is made of). */
    List<String> coldBatchHeaders() {
        List<String> out = new ArrayList<>();
        for (ColdSegment s : manifest().segments()) {
            MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(store.get(s.segmentKey())));
            for (RecordBatch b : records.batches()) {
                if (!b.isValid()) {
                    throw new AssertionError("invalid batch " + b.baseOffset() + " in " + s.segmentKey());
                }
                out.add(b.baseOffset() + ".." + b.lastOffset() + " pid " + b.producerId() + " epoch "
                        + b.producerEpoch() + " seq " + b.baseSequence());
            }
        }
        return out;
    }

    /** Every object under the partition's segments prefix. */
    List<ObjectKey> segmentObjects() {
        return store.listAll(BucketLayout.segmentsPrefix(tp)).map(ObjectMetadata::key).toList();
    }

    long requestCount() {
        return requests.values().stream().mapToLong(LongAdder::sum).sum();
    }

    private S3Client countingClient() {
        ExecutionInterceptor counter = new ExecutionInterceptor() {
            @Override
            public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
                String method = context.httpRequest().method().name();
                requests.computeIfAbsent(method, m -> new LongAdder()).increment();
            }
        };
        return client(server.endpoint(), counter);
    }

    /** An S3 client for the embedded S3Proxy at {@code endpoint} (also from another process), with an interceptor. */
    static S3Client client(java.net.URI endpoint, ExecutionInterceptor counter) {
        return S3Client.builder()
                .httpClient(UrlConnectionHttpClient.builder().build())
                .endpointOverride(endpoint)
                .region(Region.of(S3ProxyServer.REGION))
                .forcePathStyle(true)
                .serviceConfiguration(S3Configuration.builder().chunkedEncodingEnabled(false).build())
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY)))
                .overrideConfiguration(o -> {
                    o.addExecutionInterceptor(new NoExpectContinueInterceptor());
                    if (counter != null) {
                        o.addExecutionInterceptor(counter);
                    }
                })
                .build();
    }

    @Override
    public void close() {
        try {
            writer.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        storage.close();
        store.close();
    }
}
