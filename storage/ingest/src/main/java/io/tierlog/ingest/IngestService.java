package io.tierlog.ingest;

import io.tierlog.log.AppendJournal;
import io.tierlog.log.AppendResult;
import io.tierlog.log.ErrorType;
import io.tierlog.log.HotLog;
import io.tierlog.log.Names;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.SyncMeters;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ClientBatch;
import io.tierlog.log.format.ClientBatchValidator;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;

/**
 * The produce path, in plain Java: validates a request against docs/api.md, partitions it, appends one batch
 * per partition and answers offsets in request order. The Lambda handler and the index-service's produce endpoint
 * both call this class; neither has produce logic of its own.
 *
 * <p>Guarantees: nothing is appended unless every record passes validation (names, partitions, sizes, producer
 * sequences per partition touched); the records of one request that land in one partition form one batch, so they
 * become visible together with dense offsets. The partitions of one request are appended together
 * ({@link HotLog#append}): every partition's producer sequence is checked, under every partition's lock,
 * before anything is written, so a conflict in any of them appends nothing. Only a crash between the partitions'
 * writes leaves some of them written, unacknowledged: the retry with the same producer fields answers those with
 * their original offsets and appends only the missing ones.
 *
 * <p>Topic metadata is read from the shared volume on every request, so a topic created, reconfigured or deleted
 * by another process is seen at once. Thread-safe.
 */
public final class IngestService implements Closeable {

    private final IngestConfig config;
    private final TopicStore topics;
    private final Clock clock;
    private final SyncMeters syncMeters;
    private final Partitioner partitioner;
    private final ProduceAdmission admission;
    private final HotLog hotLog;
    /** Writers are keyed by topic id, so a topic deleted and re-created never reuses a stale writer. */
    private final Map<WriterKey, PartitionWriter> writers = new ConcurrentHashMap<>();

    private record WriterKey(UUID topicId, int partition) {
    }

    public IngestService(IngestConfig config, Clock clock, int partitionerSeed) {
        this(config, clock, () -> partitionerSeed);
    }

    /**
     * Builds the service without opening any file: partition writers open their files on their first append, and
     * the unkeyed-rotation seed is drawn from {@code partitionerSeed} on first use (see {@link Partitioner}).
     * Only the topic metadata directory is created here (no handle is kept).
     */
    public IngestService(IngestConfig config, Clock clock, IntSupplier partitionerSeed) {
        this(config, clock, partitionerSeed, SyncMeters.NONE);
    }

    /** @param syncMeters where every partition writer reports its fsyncs and its appends' waits for them */
    public IngestService(IngestConfig config, Clock clock, IntSupplier partitionerSeed, SyncMeters syncMeters) {
        this(config, clock, partitionerSeed, syncMeters, ProduceAdmission.noSpaceOnly(config.dataDir(), clock));
    }

    /** @param admission decides before every append whether the hot tier takes it (503 {@code hot-tier-full}) */
    public IngestService(IngestConfig config, Clock clock, IntSupplier partitionerSeed, SyncMeters syncMeters,
                         ProduceAdmission admission) {
        this(config, clock, partitionerSeed, syncMeters, admission, null);
    }

    /**
     * @param journal told every batch this service appends, for the indexer of the same process
     *                ({@link AppendJournal}); null where nothing indexes (the ingest function)
     */
    public IngestService(IngestConfig config, Clock clock, IntSupplier partitionerSeed, SyncMeters syncMeters,
                         ProduceAdmission admission, AppendJournal journal) {
        this.admission = admission;
        this.config = config;
        this.clock = clock;
        this.syncMeters = syncMeters;
        this.topics = new TopicStore(config.dataDir(), clock);
        this.hotLog = new HotLog(config.dataDir(), journal);
        this.partitioner = new Partitioner(partitionerSeed);
    }

    public TopicStore topics() {
        return topics;
    }

    public IngestConfig config() {
        return config;
    }

    /**
     * Refuses a request body over {@code max.request.bytes} ({@code request-too-large}, with
     * {@code maxRequestBytes}); every produce edge checks it before parsing or appending anything.
     */
    public void requireWithinRequestLimit(long bodyBytes) {
        if (bodyBytes > config.maxRequestBytes()) {
            throw new TierlogException(ErrorType.REQUEST_TOO_LARGE, "request body of " + bodyBytes
                    + " bytes exceeds max.request.bytes = " + config.maxRequestBytes(),
                    Map.of("maxRequestBytes", config.maxRequestBytes()));
        }
    }

    /** Appends a parsed produce request (the JSON body is parsed by the HTTP edges: io.tierlog.http.JsonProduce). */
    public ProduceResult produce(String topicName, ProduceRequest request) {
        return admission.admitted(() -> produceAdmitted(topicName, request));
    }

    private ProduceResult produceAdmitted(String topicName, ProduceRequest request) {
        TopicMetadata topic = topics.get(Names.requireValidTopic(topicName));
        long now = clock.millis();
        int[] partitionOf = new int[request.records().size()];
        int unkeyed = -1;
        Map<Integer, List<AppendRecord>> byPartition = new TreeMap<>();
        for (int i = 0; i < partitionOf.length; i++) {
            ProduceRecord r = request.records().get(i);
            int p;
            if (r.partition() != null) {
                topic.requirePartition(r.partition());
                p = r.partition();
            } else if (r.key() != null) {
                p = Partitioner.forKey(r.key(), topic.partitions());
            } else {
                if (unkeyed < 0) {
                    unkeyed = partitioner.forUnkeyed(request, topic.partitions());
                }
                p = unkeyed;
            }
            AppendRecord record = new AppendRecord(r.key(), r.value(), r.headers(),
                    r.timestamp() == null ? now : r.timestamp());
            if (record.payloadBytes() > topic.config().maxMessageBytes()) {
                throw new TierlogException(ErrorType.RECORD_TOO_LARGE, "records[" + i + "] is " + record.payloadBytes()
                        + " bytes; the topic's max.message.bytes is " + topic.config().maxMessageBytes(),
                        Map.of("field", "records[" + i + "]", "maxMessageBytes", topic.config().maxMessageBytes()));
            }
            partitionOf[i] = p;
            byPartition.computeIfAbsent(p, k -> new ArrayList<>()).add(record);
        }
        // One sequence per partition touched, all checked under the partitions' locks before anything is appended.
        Map<Integer, ProducerIdentity> producers = request.producer()
                .map(ref -> ref.identities(byPartition.keySet())).orElse(Map.of());
        String producerName = request.producer().map(ProducerRef::id).orElse(null);
        List<PartitionWriter.Part> parts = new ArrayList<>(byPartition.size());
        for (Map.Entry<Integer, List<AppendRecord>> e : byPartition.entrySet()) {
            parts.add(PartitionWriter.Part.of(writer(topic, e.getKey()), e.getValue(),
                    producers.getOrDefault(e.getKey(), ProducerIdentity.NONE), producerName, topic.config()));
        }
        List<AppendResult> results = hotLog.append(parts);
        return answer(partitionOf, byPartition.keySet().stream().mapToInt(Integer::intValue).toArray(), results,
                request.producer().isPresent());
    }

    /** The time the service stamps on records that carry none (its clock, epoch milliseconds). */
    public long nowMillis() {
        return clock.millis();
    }

    /**
     * The partition of a request's unkeyed records ({@link Partitioner#forUnkeyed}): a function of the producer id
     * when there is one, else the next in the rotation. Call once per request that has unkeyed records.
     */
    public int unkeyedPartition(Optional<ProducerRef> producer, int partitions) {
        return partitioner.forUnkeyed(producer, partitions);
    }

    /**
     * Appends a request whose batches an edge has already built for {@code topic} (read by that edge with
     * {@link TopicStore#find}, and used for partitioning and record checks): the same append, atomicity,
     * idempotence and answer as {@link #produce(String, ProduceRequest)}, under the same admission. The edge has
     * checked everything {@code produce} checks before appending (partitions, {@code max.message.bytes}, producer
     * sequences against the partitions touched).
     */
    public ProduceResult produceEncoded(TopicMetadata topic, EncodedProduce request) {
        return admission.admitted(() -> {
            String producerName = request.producer().map(ProducerRef::id).orElse(null);
            List<PartitionWriter.Part> parts = new ArrayList<>(request.batches().size());
            for (EncodedProduce.Batch b : request.batches()) {
                parts.add(PartitionWriter.Part.ofEncoded(writer(topic, b.partition()), b.bytes(), b.recordCount(),
                        b.producer(), producerName, topic.config()));
            }
            List<AppendResult> results = hotLog.append(parts);
            return answer(request.partitionOf(), request.batches().stream().mapToInt(EncodedProduce.Batch::partition)
                    .toArray(), results, request.producer().isPresent());
        });
    }

    /**
     * The offsets of each record in request order, from the base offset appended to each partition; two arrays, not
     * an object per record ({@link RecordOffsets}).
     */
    private static ProduceResult answer(int[] partitionOf, int[] partitions, List<AppendResult> results,
                                        boolean idempotent) {
        int maxPartition = 0;
        for (int p : partitions) {
            maxPartition = Math.max(maxPartition, p);
        }
        long[] nextOffset = new long[maxPartition + 1];
        boolean allDuplicates = true;
        for (int i = 0; i < partitions.length; i++) {
            AppendResult result = results.get(i);
            allDuplicates &= result.duplicate();
            nextOffset[partitions[i]] = result.baseOffset();
        }
        long[] offsets = new long[partitionOf.length];
        for (int r = 0; r < partitionOf.length; r++) {
            offsets[r] = nextOffset[partitionOf[r]]++;
        }
        return new ProduceResult(new RecordOffsets(partitionOf.clone(), offsets), allDuplicates && idempotent);
    }

    /**
     * Produces a binary body ({@code application/vnd.tierlog.record-batches}): one or more whole Kafka RecordBatch
     * v2 batches back to back, as a Kafka producer builds them, all for {@code partition}. No JSON is parsed and
     * the client's batch is appended as sent (only its base offset, outside the CRC, is stamped), unless the body
     * holds several batches or a record timestamp of -1: then it is re-encoded as one batch (see
     * {@link ClientBatchValidator}), so that a request always lands as one batch, atomically.
     *
     * <p>Checks, in order, with nothing appended on failure: the topic name ({@code invalid-topic}); the body size
     * against {@code max.request.bytes} ({@code request-too-large}); the topic ({@code unknown-topic}) and
     * partition ({@code unknown-partition}); then every batch and record ({@code bad-request} with
     * {@code field = "body"}, or {@code record-too-large} with {@code field = "records[i]"}). Idempotence comes
     * from the batch header, keyed as the JSON path keys it (a decimal JSON producer id is the same producer as
     * that numeric producerId): a retry answers the original offsets with {@code duplicate}, a gap
     * {@code out-of-order-sequence}, an old epoch {@code fenced-producer}.
     *
     * @param body the request body, position to limit; its batch header bytes may be overwritten (base offset,
     *             partition leader epoch) and it must not change until this returns
     */
    public BatchProduceResult produceBatches(String topicName, int partition, ByteBuffer body) {
        return produceBatches(topicName, partition, body, null);
    }

    /**
     * As {@link #produceBatches(String, int, ByteBuffer)}, for a caller with a transaction coordinator behind it (the
     * Kafka listener): {@code inTransaction} runs under the partition's lock and throws unless the batch's producer
     * has its transaction open with this partition in it ({@link PartitionWriter#append(ClientBatch,
     * io.tierlog.log.topic.TopicConfig, Runnable)}); only then may a body be transactional. Every other edge (HTTP,
     * the Lambda function) has no coordinator behind it, and a transactional batch appended there would open a
     * transaction nothing ends, holding the partition's last stable offset back for good; they are refused
     * ({@code bad-request}).
     */
    public BatchProduceResult produceTransactionalBatches(String topicName, int partition, ByteBuffer body,
                                                          Runnable inTransaction) {
        return produceBatches(topicName, partition, body, Objects.requireNonNull(inTransaction, "inTransaction"));
    }

    /** @param inTransaction the transaction check of a transactional body, null where none is possible */
    private BatchProduceResult produceBatches(String topicName, int partition, ByteBuffer body,
                                              Runnable inTransaction) {
        Names.requireValidTopic(topicName);
        requireWithinRequestLimit(body.remaining());
        TopicMetadata topic = topics.get(topicName);
        topic.requirePartition(partition);
        ClientBatch batch = ClientBatchValidator.validate(body, topic.config().maxMessageBytes(), clock.millis());
        if (batch.transactional() && inTransaction == null) {
            throw new TierlogException(ErrorType.BAD_REQUEST, "body: a transactional batch needs a transaction, which "
                    + "only Kafka clients on the Kafka listener can open", Map.of("field", "body"));
        }
        AppendResult result = admission.admitted(() -> inTransaction == null
                ? writer(topic, partition).append(batch, topic.config())
                : writer(topic, partition).append(batch, topic.config(), inTransaction));
        return new BatchProduceResult(partition, result.baseOffset(), batch.recordCount(), result.duplicate(),
                result.logAppendTimeMs());
    }

    /**
     * Appends a transaction coordinator's commit or abort marker (KIP-98) to a partition with the topic's config and
     * this service's fsync policy ({@link PartitionWriter#appendMarker}); returns the marker's offset once it is
     * durable per that policy. Markers bypass produce admission ({@code hot-tier-full}): a marker is one small batch,
     * and refusing it would hold the partition's last stable offset, and its read_committed readers, back.
     *
     * @throws TierlogException {@code unknown-topic} or {@code unknown-partition}; {@code fenced-producer} if the
     *         producer's epoch on the partition is newer than the marker's
     */
    public long appendMarker(TopicPartition tp, TransactionMarker marker) {
        TopicMetadata topic = topics.get(tp.topic());
        topic.requirePartition(tp.partition());
        return writer(topic, tp.partition()).appendMarker(marker, topic.config()).baseOffset();
    }

    /**
     * The idempotent producers a partition knows ({@link PartitionWriter#activeProducers()}): blocking, it takes the
     * partition's writer lock. Throws as produce does for an unknown topic or partition.
     */
    public List<PartitionWriter.ActiveProducer> activeProducers(String topicName, int partition) {
        TopicMetadata topic = topics.get(topicName);
        topic.requirePartition(partition);
        return writer(topic, partition).activeProducers();
    }

    private PartitionWriter writer(TopicMetadata topic, int partition) {
        return writers.computeIfAbsent(new WriterKey(topic.id(), partition), k -> hotLog.writer(
                new TopicPartition(topic.name(), partition), config.fsync(), config.fsyncInterval(), clock,
                syncMeters, config.producerIdExpiration()));
    }

    /** Closes and forgets the writers of a topic (call before deleting its files). */
    public void forgetTopic(String name) {
        writers.entrySet().removeIf(e -> {
            if (e.getValue().partition().topic().equals(name)) {
                closeQuietly(e.getValue());
                return true;
            }
            return false;
        });
    }

    @Override
    public void close() {
        writers.values().forEach(IngestService::closeQuietly);
        writers.clear();
    }

    private static void closeQuietly(PartitionWriter w) {
        try {
            w.close();
        } catch (IOException ignored) {
            // closing flushes; a failure here is reported by the next open's recovery, never as data loss of
            // acknowledged records under fsync=always
        }
    }
}
