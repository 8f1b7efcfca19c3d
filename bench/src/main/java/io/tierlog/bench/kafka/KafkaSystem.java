package io.tierlog.bench.kafka;

import io.tierlog.bench.compare.ConsumeStats;
import io.tierlog.bench.compare.Durability;
import io.tierlog.bench.compare.Pacer;
import io.tierlog.bench.compare.ProduceSpec;
import io.tierlog.bench.compare.ProduceStats;
import io.tierlog.bench.compare.SystemUnderTest;
import io.tierlog.bench.compare.Workers;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SynchronizedHistogram;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.LeaderNotAvailableException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Drives a {@link KafkaBroker} with the stock Java clients, configured the way Kafka is run for throughput:
 * producers with {@code acks=all} (idempotence on, Kafka's default), {@code linger.ms=5},
 * {@code batch.size=512 KiB}, no compression, {@code max.in.flight.requests.per.connection=5} (the default),
 * the default 32 MiB {@code buffer.memory}; one {@link KafkaProducer} per concurrent producer; one
 * {@link KafkaConsumer} per partition for reads (the same reader parallelism the Tierlog side gets).
 * Durability is per topic: {@code flush.messages=1} for {@link Durability#ALWAYS}, Kafka's default otherwise.
 * Segments are 1 GiB (Kafka's default). Used from one thread.
 */
public final class KafkaSystem implements SystemUnderTest {
    /** Under the broker's default message.max.bytes (1 MiB + overhead), so no broker setting needs raising. */
    static final int BATCH_SIZE = 512 * 1024;
    static final int LINGER_MS = 5;
    /**
     * Requests in flight per producer connection: Kafka's default, set explicitly because Tierlog's producer in
     * this benchmark keeps the same number in flight ({@code TierlogSystem}).
     */
    public static final int MAX_IN_FLIGHT = 5;

    private final KafkaBroker broker;
    private final Admin admin;

    public KafkaSystem(KafkaBroker broker) {
        this.broker = broker;
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        this.admin = Admin.create(p);
    }

    @Override
    public String name() {
        return "Kafka";
    }

    @Override
    public boolean supports(Durability durability) {
        return true;
    }

    @Override
    public void createTopic(String topic, int partitions, Durability durability) throws Exception {
        Map<String, String> config = new HashMap<>();
        config.put("segment.bytes", Integer.toString(1 << 30));
        if (durability == Durability.ALWAYS) {
            config.put("flush.messages", "1");
        }
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(config)))
                .all().get(30, TimeUnit.SECONDS);
        // Wait until every partition has a leader, so the first produce does not race topic creation.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                var description = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
                if (description.partitions().size() == partitions
                        && description.partitions().stream().allMatch(pi -> pi.leader() != null)) {
                    // ListOffsets is answered by each partition's leader replica itself, so success means the
                    // broker serves the partitions, not only that the metadata names a leader.
                    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
                    for (int p = 0; p < partitions; p++) {
                        latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
                    }
                    admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS);
                    return;
                }
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)
                        && !(e.getCause() instanceof NotLeaderOrFollowerException)
                        && !(e.getCause() instanceof LeaderNotAvailableException)) {
                    throw e;
                }
                // the broker has not caught up with the controller's metadata yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Kafka topic " + topic + " has no leader for every partition after 30 s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // polling metadata: there is no event to wait on
        }
    }

    Properties producerProps() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, Integer.toString(LINGER_MS));
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(BATCH_SIZE));
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, Integer.toString(MAX_IN_FLIGHT));
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return p;
    }

    @Override
    public ProduceStats produce(String topic, ProduceSpec spec) throws Exception {
        List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
        List<Histogram> histograms = new ArrayList<>();
        AtomicReference<Exception> failure = new AtomicReference<>();
        try {
            for (int i = 0; i < spec.producers(); i++) {
                KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps());
                producer.partitionsFor(topic); // metadata fetched before the clock starts
                producers.add(producer);
                histograms.add(new SynchronizedHistogram(TimeUnit.MINUTES.toMicros(10), 3));
            }
            long elapsed = Workers.runTimed(spec.producers(), (worker, startNanos) -> {
                KafkaProducer<byte[], byte[]> producer = producers.get(worker);
                Histogram histogram = histograms.get(worker);
                Pacer pacer = new Pacer(startNanos, spec.recordsPerSecond() / spec.producers(), worker, spec.producers());
                long n = spec.recordsFor(worker);
                for (long i = 0; i < n && failure.get() == null; i++) {
                    long sentAt = pacer.awaitNext();
                    producer.send(new ProducerRecord<>(topic, null, spec.payload().bytes(i)), (md, e) -> {
                        if (e != null) {
                            failure.compareAndSet(null, e);
                        } else {
                            histogram.recordValue(Math.max(0, (System.nanoTime() - sentAt) / 1000));
                        }
                    });
                }
                producer.flush();
            });
            if (failure.get() != null) {
                throw new IllegalStateException("Kafka produce failed", failure.get());
            }
            Histogram all = new Histogram(TimeUnit.MINUTES.toMicros(10), 3);
            histograms.forEach(all::add);
            if (all.getTotalCount() != spec.records()) {
                throw new IllegalStateException("Kafka acknowledged " + all.getTotalCount() + " of " + spec.records());
            }
            return new ProduceStats(spec.records(), spec.records() * spec.payload().valueBytes(), elapsed, all);
        } finally {
            producers.forEach(p -> p.close(Duration.ofSeconds(10)));
        }
    }

    @Override
    public ConsumeStats consume(String topic, int partitions, long expectedRecords, Duration timeout) throws Exception {
        List<KafkaConsumer<byte[], byte[]>> consumers = new ArrayList<>();
        long[] ends = new long[partitions];
        long[] counts = new long[partitions];
        long[] bytes = new long[partitions];
        try {
            for (int p = 0; p < partitions; p++) {
                KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps());
                TopicPartition tp = new TopicPartition(topic, p);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                ends[p] = consumer.endOffsets(List.of(tp)).get(tp);
                consumers.add(consumer);
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            long elapsed = Workers.runTimed(partitions, (p, startNanos) -> {
                KafkaConsumer<byte[], byte[]> consumer = consumers.get(p);
                long position = 0;
                while (position < ends[p]) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("Kafka consume of partition " + p + " timed out at offset "
                                + position + " of " + ends[p]);
                    }
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        counts[p]++;
                        bytes[p] += r.value() == null ? 0 : r.value().length;
                        position = r.offset() + 1;
                    }
                }
            });
            long total = 0;
            long totalBytes = 0;
            for (int p = 0; p < partitions; p++) {
                total += counts[p];
                totalBytes += bytes[p];
            }
            if (total != expectedRecords) {
                throw new IllegalStateException("Kafka consumed " + total + " records, expected " + expectedRecords);
            }
            return new ConsumeStats(total, totalBytes, elapsed);
        } finally {
            consumers.forEach(c -> c.close(Duration.ofSeconds(5)));
        }
    }

    private Properties consumerProps() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "2000");
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(4 << 20));
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return p;
    }

    @Override
    public int[] partitionsForKeys(String topic, List<String> keys) throws Exception {
        int[] partitions = new int[keys.size()];
        Properties props = producerProps();
        // Only placement matters here, not throughput or exactly-once: one request in flight and no idempotence.
        // On a topic created a moment ago, the idempotent producer with 5 requests in flight was seen to retry
        // NOT_LEADER_OR_FOLLOWER and then OUT_OF_ORDER_SEQUENCE_NUMBER for minutes (Kafka 4.4.0 client).
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            producer.partitionsFor(topic);
            List<Future<RecordMetadata>> acks = new ArrayList<>(keys.size());
            for (String key : keys) {
                acks.add(producer.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
                        "\"k\"".getBytes(StandardCharsets.US_ASCII))));
            }
            for (int i = 0; i < partitions.length; i++) {
                partitions[i] = acks.get(i).get(150, TimeUnit.SECONDS).partition();
            }
        }
        return partitions;
    }

    @Override
    public void deleteTopic(String topic) throws Exception {
        admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
    }

    @Override
    public List<Long> serverPids() {
        return List.of(broker.pid());
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
