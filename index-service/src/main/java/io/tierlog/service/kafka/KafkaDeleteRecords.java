package io.tierlog.service.kafka;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.read.PartitionReads;
import jakarta.inject.Singleton;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteRecordsResponse;

/**
 * DeleteRecords: each partition's log start moves to the offset asked (-1: the high watermark) through
 * {@link PartitionReads#deleteRecordsBefore}, so HTTP and Kafka readers alike stop at it at once, on every instance.
 * Answers the log start after the move as the partition's low watermark; OFFSET_OUT_OF_RANGE above the high
 * watermark, UNKNOWN_TOPIC_OR_PARTITION for what does not exist, each partition on its own. The segments below stay
 * on disk until retention removes them (docs/adr/0048-delete-records-as-a-log-start-mark.md). Blocking (a durable
 * write per moved partition): runs on a worker thread.
 */
@Singleton
public class KafkaDeleteRecords {
    private final PartitionReads reads;
    private final KafkaTopics topics;

    public KafkaDeleteRecords(PartitionReads reads, TopicStore topicStore) {
        this.reads = reads;
        this.topics = new KafkaTopics(topicStore);
    }

    DeleteRecordsResponse deleteRecords(DeleteRecordsRequest request) {
        DeleteRecordsResponseData out = new DeleteRecordsResponseData();
        for (DeleteRecordsRequestData.DeleteRecordsTopic t : request.data().topics()) {
            DeleteRecordsResponseData.DeleteRecordsTopicResult topic =
                    new DeleteRecordsResponseData.DeleteRecordsTopicResult().setName(t.name());
            TopicMetadata meta = null;
            try {
                meta = topics.resolve(t.name(), null);
            } catch (RuntimeException unknown) {
                // every partition of it is answered UNKNOWN_TOPIC_OR_PARTITION below
            }
            for (DeleteRecordsRequestData.DeleteRecordsPartition p : t.partitions()) {
                DeleteRecordsResponseData.DeleteRecordsPartitionResult r =
                        new DeleteRecordsResponseData.DeleteRecordsPartitionResult().setPartitionIndex(p.partitionIndex())
                                .setLowWatermark(-1);
                if (meta == null || p.partitionIndex() < 0 || p.partitionIndex() >= meta.partitions()) {
                    r.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                } else {
                    try {
                        r.setLowWatermark(reads.deleteRecordsBefore(new TopicPartition(t.name(), p.partitionIndex()),
                                p.offset()));
                    } catch (RuntimeException e) {
                        r.setErrorCode(KafkaErrors.of(e).code());
                    }
                }
                topic.partitions().add(r);
            }
            out.topics().add(topic);
        }
        return new DeleteRecordsResponse(out);
    }
}
