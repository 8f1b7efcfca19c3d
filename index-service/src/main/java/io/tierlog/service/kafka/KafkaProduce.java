package io.tierlog.service.kafka;

import io.tierlog.ingest.BatchProduceResult;
import io.tierlog.ingest.IngestService;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.ops.PostAppend;
import jakarta.inject.Singleton;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Produce: each partition's records, as the client built them, go through {@link IngestService#produceBatches}, the
 * same validation and append as HTTP's record-batch produce, so a record is stored byte for byte as a Kafka
 * producer sent it (compressed batches stay compressed). The response waits for the append, and so for the fsync
 * {@code tierlog.fsync} asks for: acks=1 and acks=all mean the same here, since there are no replicas to wait for.
 * With acks=0 the append happens and no response is sent.
 *
 * <p>Idempotence is not offered: InitProducerId is not implemented, because the batch path still numbers a
 * producer's sequences per request, not per record as Kafka does. A batch carrying a producer id is appended with
 * the HTTP path's numbering.
 */
@Singleton
public class KafkaProduce {
    private final IngestService ingest;
    private final PostAppend postAppend;
    private final KafkaTopics topics;

    public KafkaProduce(IngestService ingest, TopicStore topics, PostAppend postAppend) {
        this.ingest = ingest;
        this.postAppend = postAppend;
        this.topics = new KafkaTopics(topics);
    }

    CompletableFuture<KafkaApis.Reply> produce(ProduceRequest request, short version, Executor workers) {
        CompletableFuture<KafkaApis.Reply> done = CompletableFuture.supplyAsync(
                () -> new KafkaApis.Reply(append(request)), workers);
        return request.acks() == 0 ? done.thenApply(r -> new KafkaApis.Reply((org.apache.kafka.common.protocol.ApiMessage) null, () -> {
        })) : done;
    }

    private ProduceResponse append(ProduceRequest request) {
        ProduceResponseData out = new ProduceResponseData();
        for (ProduceRequestData.TopicProduceData topicData : request.data().topicData()) {
            ProduceResponseData.TopicProduceResponse topicOut = new ProduceResponseData.TopicProduceResponse()
                    .setName(topicData.name());
            if (topicData.topicId() != null && !Uuid.ZERO_UUID.equals(topicData.topicId())) {
                topicOut.setTopicId(topicData.topicId());
            }
            TopicMetadata topic = null;
            RuntimeException topicError = null;
            try {
                topic = topics.resolve(topicData.name(), topicData.topicId());
            } catch (RuntimeException e) {
                topicError = e;
            }
            for (ProduceRequestData.PartitionProduceData partition : topicData.partitionData()) {
                ProduceResponseData.PartitionProduceResponse p = new ProduceResponseData.PartitionProduceResponse()
                        .setIndex(partition.index()).setLogAppendTimeMs(-1).setLogStartOffset(-1);
                try {
                    if (topicError != null) {
                        throw topicError;
                    }
                    p.setBaseOffset(append(topic.name(), partition));
                } catch (RuntimeException e) {
                    p.setErrorCode(KafkaErrors.of(e).code()).setErrorMessage(KafkaErrors.message(e)).setBaseOffset(-1);
                }
                topicOut.partitionResponses().add(p);
            }
            out.responses().add(topicOut);
        }
        return new ProduceResponse(out);
    }

    private long append(String topic, ProduceRequestData.PartitionProduceData partition) {
        if (!(partition.records() instanceof MemoryRecords records) || records.sizeInBytes() == 0) {
            throw Errors.CORRUPT_MESSAGE.exception("partition " + partition.index() + " carries no record batch");
        }
        long start = System.nanoTime();
        ByteBuffer body = records.buffer().duplicate();
        int length = body.remaining();
        BatchProduceResult result = ingest.produceBatches(topic, partition.index(), body);
        postAppend.appended(topic, result, length, start);
        return result.baseOffset();
    }
}
