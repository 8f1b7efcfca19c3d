package io.tierlog.bench.compaction;

import io.tierlog.bench.cold.CountingS3;
import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.LoadSampler;
import io.tierlog.bench.compare.MachineInfo;
import io.tierlog.bench.compare.Workspace;
import io.tierlog.bench.kafka.KafkaBroker;
import io.tierlog.log.HotLog;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.compaction.CleanResult;
import io.tierlog.log.compaction.HotCleaner;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.s3.S3ObjectStore;
import io.tierlog.tiering.ColdCompactionStats;
import io.tierlog.tiering.SegmentEvictionListener;
import io.tierlog.tiering.TieredStorage;
import io.tierlog.tiering.TieringConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code compaction}: compaction throughput (MB/s of input) of Tierlog's hot cleaner and cold cleaner beside Apache
 * Kafka 4.4.0's log cleaner, on the same records, in one run (docs/BENCHMARKS.md, "Compaction"). Every system gets
 * the same keyed records (seeded), in batches of the same size, in segments of the same size; the active segment is
 * never cleaned on either side. Kafka's number is the one its cleaner thread logs ("N MB of log processed in T
 * seconds"), for a topic switched to {@code compact} once all records are written, so that one pass cleans the whole
 * log. Tierlog's are the bytes read by one pass over the same log and the pass's time: the hot cleaner in-process on
 * a local volume, the cold cleaner over an S3Proxy in this JVM (filesystem-backed), whose S3 requests are counted
 * per request served. Not thread-safe; one run per JVM.
 */
@Command(name = "compaction", mixinStandardHelpOptions = true,
        description = "Compaction throughput of Tierlog's hot and cold cleaners beside Kafka 4.4.0's log cleaner.")
public final class CompactionCommand implements Callable<Integer> {
    private static final Pattern KAFKA_STATS = Pattern.compile(
            "([\\d,.]+) MB of log processed in ([\\d,.]+) seconds \\(([\\d,.]+) MB/sec\\)");
    private static final double MB = 1024 * 1024; // Kafka's cleaner statistics use MiB

    @Option(names = "--records", defaultValue = "1000000", description = "records written (default ${DEFAULT-VALUE})")
    int records;

    @Option(names = "--keys", defaultValue = "10000", description = "distinct keys (default ${DEFAULT-VALUE})")
    int keys;

    @Option(names = "--value-bytes", defaultValue = "100", description = "value size (default ${DEFAULT-VALUE})")
    int valueBytes;

    @Option(names = "--batch", defaultValue = "500", description = "records per batch (default ${DEFAULT-VALUE})")
    int batch;

    @Option(names = "--segment-bytes", defaultValue = "8388608", description = "segment size (default ${DEFAULT-VALUE})")
    int segmentBytes;

    @Option(names = "--skip-kafka", description = "measure Tierlog only")
    boolean skipKafka;

    @Option(names = "--work-dir", description = "work directory (default: a new temporary one, deleted at the end)")
    Path workDir;

    /** One system's pass: input bytes, seconds, and S3 requests (-1: not an S3 pass). */
    record Pass(String system, double inputMb, double seconds, double mbPerSec, long s3Requests, String detail) {
    }

    @Override
    public Integer call() throws Exception {
        Path root = Workspace.findRepo();
        Path work = workDir != null ? workDir : Files.createTempDirectory("tierlog-bench-compaction-");
        List<Pass> passes = new ArrayList<>();
        try (LoadSampler load = LoadSampler.start()) {
            passes.add(tierlogHot(work.resolve("hot")));
            passes.add(tierlogCold(work.resolve("cold")));
            if (!skipKafka) {
                passes.add(kafka(root.resolve("bench/target/kafka-libs"), work.resolve("kafka")));
            }
            print(passes, load.summary());
        } finally {
            if (workDir == null) {
                Workspace.deleteTree(work);
            }
        }
        return 0;
    }

    /** The records of batch {@code b}: seeded, so every system gets the same bytes. */
    private List<byte[][]> batch(Random random, int size) {
        List<byte[][]> out = new ArrayList<>(size);
        byte[] alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < size; i++) {
            byte[] key = String.format("key-%08d", random.nextInt(keys)).getBytes(StandardCharsets.US_ASCII);
            byte[] value = new byte[valueBytes];
            for (int v = 0; v < valueBytes; v++) {
                value[v] = alphabet[random.nextInt(alphabet.length)];
            }
            out.add(new byte[][]{key, value});
        }
        return out;
    }

    private TopicConfig topicConfig() {
        return TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, segmentBytes,
                TopicConfig.CLEANUP_POLICY, "compact", TopicConfig.MIN_CLEANABLE_DIRTY_RATIO, 0.01));
    }

    /** Writes every record into {@code data} as topic {@code t} partition 0. */
    private void writeTierlog(Path data, Clock clock, TopicStore topics) throws Exception {
        TopicPartition tp = new TopicPartition("t", 0);
        topics.create("t", 1, topicConfig());
        Random random = new Random(42);
        try (PartitionWriter writer = new HotLog(data).writer(tp, FsyncPolicy.NEVER, Duration.ZERO, clock)) {
            for (int written = 0; written < records; written += batch) {
                List<AppendRecord> rs = new ArrayList<>();
                for (byte[][] kv : batch(random, Math.min(batch, records - written))) {
                    rs.add(new AppendRecord(kv[0], kv[1], List.of(), clock.millis()));
                }
                writer.append(rs, ProducerIdentity.NONE, topicConfig());
            }
        }
    }

    private Pass tierlogHot(Path dir) throws Exception {
        Workspace.log("tierlog hot: writing " + records + " records");
        Path data = dir.resolve("data");
        Clock clock = Clock.systemUTC();
        writeTierlog(data, clock, new TopicStore(data, clock));
        Workspace.log("tierlog hot: cleaning");
        CleanResult r = new HotCleaner(data, clock).clean(new TopicPartition("t", 0), topicConfig(), Long.MAX_VALUE);
        double seconds = r.nanos() / 1e9;
        return new Pass("Tierlog hot cleaner (local volume)", r.bytesRead() / MB, seconds,
                r.bytesRead() / MB / seconds, -1, r.segmentsRewritten() + " segments rewritten, " + r.bytesRead()
                + " -> " + r.bytesAfter() + " bytes");
    }

    private Pass tierlogCold(Path dir) throws Exception {
        Workspace.log("tierlog cold: writing " + records + " records and tiering them to S3Proxy");
        Path data = dir.resolve("data");
        Clock clock = Clock.systemUTC();
        TopicStore topics = new TopicStore(data, clock);
        writeTierlog(data, clock, topics);
        try (CountingS3 s3 = CountingS3.start(dir.resolve("s3"))) {
            s3.createBucket("bench");
            try (S3ObjectStore store = S3ObjectStore.builder().endpointOverride(s3.endpoint())
                    .region(EmbeddedS3.REGION).credentials(EmbeddedS3.ACCESS_KEY, EmbeddedS3.SECRET_KEY)
                    .pathStyle(true).bucket("bench").build();
                 TieredStorage storage = new TieredStorage(data, dir.resolve("cache"), store, TieringConfig.DEFAULTS,
                         clock, new Random(1), SegmentEvictionListener.NONE)) {
                storage.runTieringPass();
                Workspace.log("tierlog cold: compacting");
                s3.reset();
                long start = System.nanoTime();
                storage.runColdCompactionPass();
                double seconds = (System.nanoTime() - start) / 1e9;
                ColdCompactionStats stats = storage.coldCompactionStats();
                long requests = s3.counts().requests();
                double gib = stats.bytesRead() / (double) (1L << 30);
                return new Pass("Tierlog cold cleaner (S3Proxy on loopback)", stats.bytesRead() / MB, seconds,
                        stats.bytesRead() / MB / seconds, requests, stats.segmentsReplaced() + " segments replaced, "
                        + stats.bytesRead() + " -> " + stats.bytesWritten() + " bytes; " + requests + " S3 requests "
                        + "= " + Math.round(requests / gib) + " per GiB of input");
            }
        }
    }

    private Pass kafka(Path libs, Path dir) throws Exception {
        Workspace.log("kafka: starting a broker");
        String cleanerLogger = "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread=info";
        try (KafkaBroker broker = KafkaBroker.start(libs, dir, Map.of("log.cleaner.backoff.ms", "500"),
                List.of(cleanerLogger))) {
            Properties admin = new Properties();
            admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
            try (Admin a = Admin.create(admin)) {
                // Written as a plain log first, so that the cleaner does not clean parts of it while it is written.
                a.createTopics(List.of(new NewTopic("t", 1, (short) 1).configs(Map.of(
                        "cleanup.policy", "delete", "retention.ms", "-1", "segment.bytes",
                        String.valueOf(segmentBytes))))).all().get(60, TimeUnit.SECONDS);
                Workspace.log("kafka: producing " + records + " records");
                Properties p = new Properties();
                p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
                p.put(ProducerConfig.ACKS_CONFIG, "all");
                p.put(ProducerConfig.LINGER_MS_CONFIG, "50");
                // About one Tierlog batch (--batch records) per producer batch.
                p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(batch * (valueBytes + 30)));
                Random random = new Random(42);
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                        new ByteArraySerializer())) {
                    for (int written = 0; written < records; written += batch) {
                        for (byte[][] kv : batch(random, Math.min(batch, records - written))) {
                            producer.send(new ProducerRecord<>("t", 0, kv[0], kv[1]));
                        }
                    }
                    producer.flush();
                }
                Workspace.log("kafka: switching the topic to compact and waiting for its cleaner");
                ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "t");
                a.incrementalAlterConfigs(Map.of(topic, List.of(
                        new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET),
                        new AlterConfigOp(new ConfigEntry("min.cleanable.dirty.ratio", "0.01"),
                                AlterConfigOp.OpType.SET)))).all().get(60, TimeUnit.SECONDS);
            }
            Path log = dir.resolve("broker.log");
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            while (System.nanoTime() < deadline) {
                String text = Files.readString(log);
                int at = text.indexOf("cleaned log t-0");
                if (at >= 0) {
                    Matcher m = KAFKA_STATS.matcher(text.substring(at));
                    if (m.find()) {
                        int end = text.indexOf("reduction", at);
                        String block = text.substring(at, end < 0 ? Math.min(text.length(), at + 800) : end + 9);
                        return new Pass("Kafka 4.4.0 log cleaner (broker, local disk)", number(m.group(1)),
                                number(m.group(2)), number(m.group(3)), -1,
                                block.replaceAll("\\s+", " ").trim());
                    }
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
            }
            throw new IllegalStateException("Kafka's cleaner did not report within 10 minutes; see " + log);
        }
    }

    private static double number(String s) {
        return Double.parseDouble(s.replace(",", ""));
    }

    private void print(List<Pass> passes, String load) {
        System.out.println();
        System.out.printf("Compaction of %,d records (%d-byte values, %,d keys, %d per batch) in %d-byte segments; "
                + "load %s; %s%n%n", records, valueBytes, keys, batch, segmentBytes, load, MachineInfo.loadAverage());
        System.out.println("| cleaner | input MB | seconds | MB/s of input | S3 requests |");
        System.out.println("|---|---:|---:|---:|---:|");
        for (Pass p : passes) {
            System.out.printf("| %s | %.1f | %.2f | %.1f | %s |%n", p.system(), p.inputMb(), p.seconds(), p.mbPerSec(),
                    p.s3Requests() < 0 ? "" : String.valueOf(p.s3Requests()));
        }
        System.out.println();
        for (Pass p : passes) {
            System.out.println("- " + p.system() + ": " + p.detail());
        }
    }
}
