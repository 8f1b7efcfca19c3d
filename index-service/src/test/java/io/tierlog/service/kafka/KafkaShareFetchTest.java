package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeResponse;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ShareFetch and ShareAcknowledge v1 as raw requests, to see exactly what the listener answers: the acquired runs
 * and their delivery counts, session epochs, acknowledgements of offsets a member does not hold, and records a
 * member held when its session closed handed to another member at once (not when their locks run out).
 */
@QuarkusTest
class KafkaShareFetchTest {
    @Inject
    KafkaListener listener;

    private record Topic(String name, Uuid id) {
    }

    private Topic topicWithRecords(int records, String group) throws Exception {
        return topicWithRecords(1, records, group);
    }

    private Topic topicWithRecords(int partitions, int records, String group) throws Exception {
        String name = KafkaListenerTest.unique("shf");
        Uuid id;
        try (Admin admin = KafkaClients.admin(listener.port())) {
            id = admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).topicId(name).get();
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                    .all().get();
        }
        KafkaClients.produceToEachPartition(listener.port(), name, partitions, 0, records);
        return new Topic(name, id);
    }

    private static ShareFetchRequestData fetch(String group, String member, int epoch, Topic topic, int maxRecords,
                                               ShareFetchRequestData.AcknowledgementBatch... acks) {
        return fetch(group, member, epoch, topic, 1, maxRecords, acks);
    }

    /** A ShareFetch of partitions {@code 0..partitions-1}, the acknowledgements (if any) on partition 0. */
    private static ShareFetchRequestData fetch(String group, String member, int epoch, Topic topic, int partitions,
                                               int maxRecords, ShareFetchRequestData.AcknowledgementBatch... acks) {
        ShareFetchRequestData.FetchTopicCollection topics = new ShareFetchRequestData.FetchTopicCollection();
        ShareFetchRequestData.FetchTopic t = new ShareFetchRequestData.FetchTopic().setTopicId(topic.id());
        for (int p = 0; p < partitions; p++) {
            t.partitions().add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(p)
                    .setAcknowledgementBatches(p == 0 ? List.of(acks) : List.of()));
        }
        topics.add(t);
        return new ShareFetchRequestData().setGroupId(group).setMemberId(member).setShareSessionEpoch(epoch)
                .setMaxWaitMs(epoch == -1 ? 0 : 2000).setMinBytes(1).setMaxBytes(1 << 20).setMaxRecords(maxRecords)
                .setBatchSize(maxRecords).setTopics(topics);
    }

    private static ShareFetchResponseData.PartitionData partition(ShareFetchResponse r) {
        assertThat(r.data().errorCode()).isEqualTo(Errors.NONE.code());
        return r.data().responses().iterator().next().partitions().get(0);
    }

    private static ShareFetchRequestData.AcknowledgementBatch ack(long first, long last, int type) {
        return new ShareFetchRequestData.AcknowledgementBatch().setFirstOffset(first).setLastOffset(last)
                .setAcknowledgeTypes(List.of((byte) type));
    }

    @Test
    void recordsHeldWhenASessionClosesGoToAnotherMemberAtOnce() throws Exception {
        String group = KafkaListenerTest.unique("shf-g");
        Topic topic = topicWithRecords(10, group);
        try (RawKafka raw = new RawKafka(listener.port())) {
            ShareFetchResponse first = raw.call(new ShareFetchRequest.Builder(fetch(group, "m1", 0, topic, 10)),
                    (short) 1);
            ShareFetchResponseData.PartitionData got = partition(first);
            assertThat(first.data().acquisitionLockTimeoutMs()).isEqualTo(30_000);
            assertThat(got.acquiredRecords()).singleElement().satisfies(a -> {
                assertThat(a.firstOffset()).isZero();
                assertThat(a.lastOffset()).isEqualTo(9);
                assertThat(a.deliveryCount()).isEqualTo((short) 1);
            });
            assertThat(KafkaInternals.hasRecords(got.records())).isTrue();

            // Accept 0..3, then close the session holding 4..9.
            ShareFetchResponse closing = raw.call(new ShareFetchRequest.Builder(
                    fetch(group, "m1", -1, topic, 10, ack(0, 3, 1))), (short) 1);
            assertThat(partition(closing).acknowledgeErrorCode()).isEqualTo(Errors.NONE.code());
            assertThat(partition(closing).acquiredRecords()).as("a closing fetch acquires nothing").isEmpty();

            ShareFetchResponse other = raw.call(new ShareFetchRequest.Builder(fetch(group, "m2", 0, topic, 10)),
                    (short) 1);
            assertThat(partition(other).acquiredRecords()).as("4..9, released at the close, delivered again")
                    .singleElement().satisfies(a -> {
                        assertThat(a.firstOffset()).isEqualTo(4);
                        assertThat(a.lastOffset()).isEqualTo(9);
                        assertThat(a.deliveryCount()).isEqualTo((short) 2);
                    });
        }
    }

    /**
     * Consumers that join together begin acquiring at different partitions: each session starts its turns one
     * partition after the session opened before it, where all had started at the first partition, acquiring from
     * the same one at once.
     */
    @Test
    void sessionsOpenedOneAfterAnotherStartAcquiringAtDifferentPartitions() throws Exception {
        String group = KafkaListenerTest.unique("shf-g");
        int partitions = 4;
        Topic topic = topicWithRecords(partitions, 10, group);
        try (RawKafka raw = new RawKafka(listener.port())) {
            List<Integer> firstPartitions = new ArrayList<>();
            for (String member : List.of("m1", "m2", "m3")) {
                // Five records: half a partition, so a start at the same partition would acquire from it again.
                ShareFetchResponse r = raw.call(new ShareFetchRequest.Builder(
                        fetch(group, member, 0, topic, partitions, 5)), (short) 1);
                assertThat(r.data().errorCode()).isEqualTo(Errors.NONE.code());
                List<Integer> acquiring = r.data().responses().iterator().next().partitions().stream()
                        .filter(p -> !p.acquiredRecords().isEmpty()).map(p -> p.partitionIndex()).toList();
                assertThat(acquiring).as(member + " acquires five records of one partition").hasSize(1);
                firstPartitions.add(acquiring.get(0));
            }
            assertThat(firstPartitions).as("each session starts one partition further").doesNotHaveDuplicates()
                    .satisfies(ps -> assertThat(Math.floorMod(ps.get(1) - ps.get(0), partitions)).isEqualTo(1));
        }
    }

    @Test
    void sessionEpochsAndAcknowledgementsOfOffsetsNotHeldAreRefused() throws Exception {
        String group = KafkaListenerTest.unique("shf-g");
        Topic topic = topicWithRecords(5, group);
        try (RawKafka raw = new RawKafka(listener.port())) {
            ShareFetchResponse before = raw.call(new ShareFetchRequest.Builder(fetch(group, "m1", 1, topic, 5)),
                    (short) 1);
            assertThat(before.data().errorCode()).isEqualTo(Errors.SHARE_SESSION_NOT_FOUND.code());

            assertThat(partition(raw.call(new ShareFetchRequest.Builder(fetch(group, "m1", 0, topic, 2)), (short) 1))
                    .acquiredRecords()).hasSize(1);
            ShareFetchResponse skipped = raw.call(new ShareFetchRequest.Builder(fetch(group, "m1", 2, topic, 2)),
                    (short) 1);
            assertThat(skipped.data().errorCode()).isEqualTo(Errors.INVALID_SHARE_SESSION_EPOCH.code());

            // Offsets 0..1 are m1's; 2..4 are no one's yet.
            ShareFetchResponse notHeld = raw.call(new ShareFetchRequest.Builder(
                    fetch(group, "m1", 1, topic, 0, ack(1, 3, 1))), (short) 1);
            assertThat(partition(notHeld).acknowledgeErrorCode()).isEqualTo(Errors.INVALID_RECORD_STATE.code());

            ShareAcknowledgeRequestData.AcknowledgeTopicCollection topics =
                    new ShareAcknowledgeRequestData.AcknowledgeTopicCollection();
            ShareAcknowledgeRequestData.AcknowledgeTopic t = new ShareAcknowledgeRequestData.AcknowledgeTopic()
                    .setTopicId(topic.id());
            t.partitions().add(new ShareAcknowledgeRequestData.AcknowledgePartition().setPartitionIndex(0)
                    .setAcknowledgementBatches(List.of(new ShareAcknowledgeRequestData.AcknowledgementBatch()
                            .setFirstOffset(0).setLastOffset(1).setAcknowledgeTypes(List.of((byte) 1)))));
            topics.add(t);
            ShareAcknowledgeResponse acked = raw.call(new ShareAcknowledgeRequest.Builder(
                    new ShareAcknowledgeRequestData().setGroupId(group).setMemberId("m1").setShareSessionEpoch(2)
                            .setTopics(topics)), (short) 1);
            assertThat(acked.data().errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(acked.data().responses().iterator().next().partitions().get(0).errorCode())
                    .as("0..1 were still m1's: the refused batch above took nothing").isEqualTo(Errors.NONE.code());
        }
    }
}
