package io.tierlog.service.kafka;

import io.tierlog.ingest.BatchProduceResult;
import io.tierlog.ingest.IngestService;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.TransactionalBatches;
import io.tierlog.service.transactions.TransactionsSetup;
import io.tierlog.transactions.TransactionCoordinator;
import io.tierlog.transactions.TxnError;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.ops.PostAppend;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Produce: each partition's records, as the client built them, go through {@link IngestService#produceBatches}, the
 * same validation and append as HTTP's record-batch produce, so a record is stored byte for byte as a Kafka
 * producer sent it (compressed batches stay compressed). The response waits for the append, and so for the fsync
 * {@code tierlog.fsync} asks for: acks=1 and acks=all mean the same here, since there are no replicas to wait for.
 * With acks=0 the append happens and no response is sent.
 *
 * <p>Idempotent producers: {@link #initProducerId} hands out a fresh producer id (epoch 0), and a batch carrying
 * it is checked by the partition's producer state, the same table HTTP's idempotent produce uses, with Kafka's
 * numbering (a sequence counts records per producer id and partition): a retry of one of the last 5 batches is
 * answered with its original offsets and not appended again, a gap is OUT_OF_ORDER_SEQUENCE_NUMBER, an older
 * epoch INVALID_PRODUCER_EPOCH. DescribeProducers lists that state per partition.
 *
 * <p>Transactional batches (a producer with a {@code transactional.id}, {@link KafkaTransactions}) are appended only
 * while the coordinator holds that producer's transaction open with the partition in it, checked under the
 * partition's lock ({@link TransactionCoordinator#requireInTransaction}), so no batch lands after the transaction's
 * marker: the check Kafka added in KIP-890 part 1 against hanging transactions, made atomic here.
 */
@Singleton
public class KafkaProduce {
    private static final Logger LOG = Logger.getLogger(KafkaProduce.class);
    private final IngestService ingest;
    private final TransactionCoordinator transactions;
    private final PostAppend postAppend;
    private final KafkaTopics topics;

    public KafkaProduce(IngestService ingest, TopicStore topics, PostAppend postAppend,
                        TransactionCoordinator transactions) {
        this.ingest = ingest;
        this.transactions = transactions;
        this.postAppend = postAppend;
        this.topics = new KafkaTopics(topics);
    }

    /**
     * A producer id for an idempotent (non-transactional) producer: as Kafka does for these, a new id at epoch 0 on
     * every call, also when the producer names its previous id and epoch to bump them (KIP-360). Ids are 63 random
     * bits, so instances sharing a volume hand them out without coordinating, and an id never returns after a
     * restart; they share the space of HTTP's producer ids (a decimal id, or 63 bits of a SHA-256), where a
     * collision is as likely as two random 63-bit values meeting.
     */
    InitProducerIdResponse initProducerId(InitProducerIdRequest request) {
        return new InitProducerIdResponse(new InitProducerIdResponseData().setThrottleTimeMs(0)
                .setProducerId(TransactionsSetup.newProducerId()).setProducerEpoch((short) 0));
    }

    /**
     * DescribeProducers (what {@code kafka-transactions describe-producers} shows): each partition's idempotent
     * producers as its producer state holds them after every writer's appends ({@link IngestService#activeProducers}),
     * so one answer is right on any instance, with the first offset of a transactional producer's open transaction
     * on the partition (-1: none) and coordinator epoch -1 (the coordinator has none); the last timestamp is when a writer applied the producer's newest batch (the
     * state keeps that, not the batch's own timestamp). Blocking (takes each partition's writer lock): a worker thread.
     */
    DescribeProducersResponse describeProducers(DescribeProducersRequest request) {
        DescribeProducersResponseData out = new DescribeProducersResponseData();
        for (DescribeProducersRequestData.TopicRequest t : request.data().topics()) {
            DescribeProducersResponseData.TopicResponse topic = new DescribeProducersResponseData.TopicResponse()
                    .setName(t.name());
            for (int partition : t.partitionIndexes()) {
                DescribeProducersResponseData.PartitionResponse p =
                        new DescribeProducersResponseData.PartitionResponse().setPartitionIndex(partition);
                try {
                    for (PartitionWriter.ActiveProducer a : ingest.activeProducers(t.name(), partition)) {
                        p.activeProducers().add(new DescribeProducersResponseData.ProducerState()
                                .setProducerId(a.producerId()).setProducerEpoch(a.epoch())
                                .setLastSequence(a.lastSequence()).setLastTimestamp(a.lastSeenMs())
                                .setCoordinatorEpoch(-1).setCurrentTxnStartOffset(a.currentTxnStartOffset()));
                    }
                } catch (RuntimeException e) {
                    Errors error = KafkaErrors.of(e);
                    if (error == Errors.UNKNOWN_SERVER_ERROR) {
                        LOG.warnf(e, "DescribeProducers of %s-%d failed", t.name(), partition);
                    }
                    p.setErrorCode(error.code()).setErrorMessage(error.message());
                }
                topic.partitions().add(p);
            }
            out.topics().add(topic);
        }
        return new DescribeProducersResponse(out);
    }

    CompletableFuture<KafkaApis.Reply> produce(ProduceRequest request, short version, Executor workers) {
        CompletableFuture<KafkaApis.Reply> done = CompletableFuture.supplyAsync(
                () -> new KafkaApis.Reply(append(request, version)), workers);
        return request.acks() == 0 ? done.thenApply(r -> new KafkaApis.Reply((org.apache.kafka.common.protocol.ApiMessage) null, () -> {
        })) : done;
    }

    /** A topic of a produce request, resolved once for the request: its metadata, or why it has none. */
    private record Resolved(ProduceRequestData.TopicProduceData data, TopicMetadata topic, RuntimeException error) {
    }

    private ProduceResponse append(ProduceRequest request, short version) {
        List<Resolved> resolved = new ArrayList<>();
        for (ProduceRequestData.TopicProduceData topicData : request.data().topicData()) {
            try {
                resolved.add(new Resolved(topicData, topics.resolve(topicData.name(), topicData.topicId()), null));
            } catch (RuntimeException e) {
                resolved.add(new Resolved(topicData, null, e));
            }
        }
        Map<TopicPartition, Errors> notAdded = version > ProduceRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2
                && request.data().transactionalId() != null ? addToTransaction(request, resolved) : Map.of();
        ProduceResponseData out = new ProduceResponseData();
        for (Resolved r : resolved) {
            ProduceRequestData.TopicProduceData topicData = r.data();
            ProduceResponseData.TopicProduceResponse topicOut = new ProduceResponseData.TopicProduceResponse()
                    .setName(topicData.name());
            if (topicData.topicId() != null && !Uuid.ZERO_UUID.equals(topicData.topicId())) {
                topicOut.setTopicId(topicData.topicId());
            }
            TopicMetadata topic = r.topic();
            RuntimeException topicError = r.error();
            for (ProduceRequestData.PartitionProduceData partition : topicData.partitionData()) {
                ProduceResponseData.PartitionProduceResponse p = new ProduceResponseData.PartitionProduceResponse()
                        .setIndex(partition.index()).setLogAppendTimeMs(-1).setLogStartOffset(-1);
                try {
                    if (topicError != null) {
                        throw topicError;
                    }
                    topic.requirePartition(partition.index()); // before any transaction check: Kafka's answer
                    Errors refused = notAdded.get(new TopicPartition(topic.name(), partition.index()));
                    if (refused != null) {
                        throw refused.exception();
                    }
                    BatchProduceResult result = append(topic.name(), partition, request.data().transactionalId());
                    p.setBaseOffset(result.baseOffset()).setLogAppendTimeMs(result.logAppendTimeMs());
                } catch (RuntimeException e) {
                    p.setErrorCode(KafkaErrors.of(e).code()).setErrorMessage(KafkaErrors.message(e)).setBaseOffset(-1);
                }
                topicOut.partitionResponses().add(p);
            }
            out.responses().add(topicOut);
        }
        return new ProduceResponse(out);
    }

    /**
     * Transaction version 2 (Produce v12+, KIP-890 part 2): the client sends no AddPartitionsToTxn, so a transactional
     * produce adds its partitions to the producer's transaction itself, starting one if none is ongoing, in one
     * coordinator write for the whole request. Each append still checks, under the partition's lock, that its
     * partition is in the ongoing transaction ({@link TransactionCoordinator#requireInTransaction}). Returns the
     * partitions refused and why (all of them when the coordinator refuses the producer).
     */
    private Map<TopicPartition, Errors> addToTransaction(ProduceRequest request, List<Resolved> resolved) {
        List<TopicPartition> partitions = new ArrayList<>();
        TransactionalBatches.Producer producer = null;
        for (Resolved r : resolved) {
            TopicMetadata topic = r.topic();
            if (topic == null) {
                continue; // answered by the append, as in a produce of protocol 1
            }
            for (ProduceRequestData.PartitionProduceData partition : r.data().partitionData()) {
                if (partition.index() < 0 || partition.index() >= topic.partitions()) {
                    continue; // answered UNKNOWN_TOPIC_OR_PARTITION by the append; never in a transaction
                }
                ByteBuffer body = KafkaInternals.batches(partition.records());
                TransactionalBatches.Producer p;
                try {
                    p = body == null ? null : TransactionalBatches.of(body);
                } catch (IllegalArgumentException e) {
                    continue;
                }
                if (p != null && (producer == null || producer.equals(p))) {
                    producer = p;
                    partitions.add(new TopicPartition(topic.name(), partition.index()));
                }
            }
        }
        if (producer == null) {
            return Map.of();
        }
        TxnError e = transactions.addPartitions(request.data().transactionalId(), producer.producerId(),
                producer.epoch(), partitions);
        if (e == TxnError.NONE) {
            return Map.of();
        }
        // Produce has no PRODUCER_FENCED: Kafka answers a fenced producer's batches INVALID_PRODUCER_EPOCH.
        Errors error = e == TxnError.PRODUCER_FENCED ? Errors.INVALID_PRODUCER_EPOCH : KafkaTransactions.error(e);
        Map<TopicPartition, Errors> refused = new HashMap<>();
        partitions.forEach(tp -> refused.put(tp, error));
        return refused;
    }

    private BatchProduceResult append(String topic, ProduceRequestData.PartitionProduceData partition,
                                      String transactionalId) {
        ByteBuffer body = KafkaInternals.batches(partition.records());
        if (body == null) {
            throw Errors.CORRUPT_MESSAGE.exception("partition " + partition.index() + " carries no record batch");
        }
        long start = System.nanoTime();
        int length = body.remaining();
        TransactionalBatches.Producer producer;
        try {
            producer = TransactionalBatches.of(body);
        } catch (IllegalArgumentException e) {
            throw Errors.INVALID_RECORD.exception(e.getMessage());
        }
        BatchProduceResult result;
        if (producer == null) {
            result = ingest.produceBatches(topic, partition.index(), body);
        } else if (transactionalId == null) {
            throw Errors.INVALID_RECORD.exception("transactional batches in a produce request without a transactional id");
        } else {
            TopicPartition tp = new TopicPartition(topic, partition.index());
            result = ingest.produceTransactionalBatches(topic, partition.index(), body,
                    () -> transactions.requireInTransaction(transactionalId, producer.producerId(), producer.epoch(),
                            tp));
        }
        postAppend.appended(topic, result, length, start);
        return result;
    }

    /**
     * The answer refusing every partition of {@code request} with {@code error}. kafka-clients' own
     * ({@code getErrorResponse}) sums each partition's record bytes first, and fails on a partition that carries none.
     */
    static ProduceResponse refused(ProduceRequest request, ApiException error) {
        ProduceResponseData out = new ProduceResponseData();
        for (ProduceRequestData.TopicProduceData topicData : request.data().topicData()) {
            ProduceResponseData.TopicProduceResponse topicOut = new ProduceResponseData.TopicProduceResponse()
                    .setName(topicData.name()).setTopicId(topicData.topicId());
            for (ProduceRequestData.PartitionProduceData partition : topicData.partitionData()) {
                topicOut.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse()
                        .setIndex(partition.index()).setErrorCode(Errors.forException(error).code())
                        .setErrorMessage(error.getMessage()).setBaseOffset(-1).setLogAppendTimeMs(-1)
                        .setLogStartOffset(-1));
            }
            out.responses().add(topicOut);
        }
        return new ProduceResponse(out);
    }
}
