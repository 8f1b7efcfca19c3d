package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.DescribeTopicPartitionsRequestData;
import org.apache.kafka.common.message.DescribeTopicPartitionsResponseData;
import org.apache.kafka.common.message.DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeTopicPartitionsRequest;
import org.apache.kafka.common.requests.DescribeTopicPartitionsResponse;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * DescribeTopicPartitions (KIP-966) as raw requests, pages and cursors included, and through Admin's
 * {@code describeTopics}, which asks it before Metadata.
 */
@QuarkusTest
class KafkaDescribeTopicPartitionsTest {
    @Inject
    KafkaListener listener;

    private static DescribeTopicPartitionsResponseData describe(RawKafka raw, List<String> topics, int limit,
                                                                DescribeTopicPartitionsRequestData.Cursor cursor)
            throws IOException {
        DescribeTopicPartitionsRequestData data = new DescribeTopicPartitionsRequestData()
                .setResponsePartitionLimit(limit).setCursor(cursor);
        topics.forEach(t -> data.topics().add(new DescribeTopicPartitionsRequestData.TopicRequest().setName(t)));
        DescribeTopicPartitionsResponse r = raw.call(new DescribeTopicPartitionsRequest.Builder(data),
                ApiKeys.DESCRIBE_TOPIC_PARTITIONS);
        return r.data();
    }

    private static List<String> partitionsOf(DescribeTopicPartitionsResponseData page) {
        List<String> out = new ArrayList<>();
        for (DescribeTopicPartitionsResponseTopic t : page.topics()) {
            if (t.errorCode() != Errors.NONE.code()) {
                out.add(t.name() + ":" + Errors.forCode(t.errorCode()));
            }
            t.partitions().forEach(p -> out.add(t.name() + "-" + p.partitionIndex()));
        }
        return out;
    }

    @Test
    void pagesFollowTheCursorThroughTopicsInNameOrder() throws Exception {
        String prefix = KafkaListenerTest.unique("dtp");
        String a = prefix + "-a";
        String b = prefix + "-b";
        String missing = prefix + "-c";
        Uuid idOfA;
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(a, 5, (short) 1), new NewTopic(b, 1, (short) 1))).all().get();
            idOfA = admin.describeTopics(List.of(a)).allTopicNames().get().get(a).topicId();
        }
        try (RawKafka raw = new RawKafka(listener.port())) {
            DescribeTopicPartitionsResponseData first = describe(raw, List.of(missing, b, a), 3, null);
            assertThat(partitionsOf(first)).containsExactly(a + "-0", a + "-1", a + "-2");
            assertThat(first.nextCursor().topicName()).isEqualTo(a);
            assertThat(first.nextCursor().partitionIndex()).isEqualTo(3);
            DescribeTopicPartitionsResponseTopic topicA = first.topics().find(a);
            assertThat(topicA.topicId()).isEqualTo(idOfA);
            assertThat(topicA.partitions()).allSatisfy(p -> {
                assertThat(p.leaderId()).isEqualTo(listener.broker().nodeId());
                assertThat(p.replicaNodes()).containsExactly(listener.broker().nodeId());
                assertThat(p.isrNodes()).isEqualTo(p.replicaNodes());
                assertThat(p.leaderEpoch()).isEqualTo(-1);
                assertThat(p.eligibleLeaderReplicas()).isEmpty();
            });

            DescribeTopicPartitionsResponseData second = describe(raw, List.of(missing, b, a), 3,
                    new DescribeTopicPartitionsRequestData.Cursor().setTopicName(a).setPartitionIndex(3));
            assertThat(partitionsOf(second)).containsExactly(a + "-3", a + "-4", b + "-0");
            assertThat(second.nextCursor().topicName()).isEqualTo(missing);
            assertThat(second.nextCursor().partitionIndex()).isZero();

            DescribeTopicPartitionsResponseData last = describe(raw, List.of(missing, b, a), 3,
                    new DescribeTopicPartitionsRequestData.Cursor().setTopicName(missing).setPartitionIndex(0));
            assertThat(partitionsOf(last)).containsExactly(missing + ":" + Errors.UNKNOWN_TOPIC_OR_PARTITION);
            assertThat(last.nextCursor()).isNull();

            // A cursor past a topic's last partition: the page still holds one partition at most.
            DescribeTopicPartitionsResponseData pastTheEnd = describe(raw, List.of(a, b, missing), 1,
                    new DescribeTopicPartitionsRequestData.Cursor().setTopicName(a).setPartitionIndex(9));
            assertThat(partitionsOf(pastTheEnd)).containsExactly(b + "-0");
            assertThat(pastTheEnd.nextCursor().topicName()).isEqualTo(missing);

            DescribeTopicPartitionsResponseData all = describe(raw, List.of(), 2000, null);
            assertThat(partitionsOf(all)).contains(a + "-4", b + "-0").noneMatch(p -> p.startsWith("__"));
            assertThat(all.nextCursor()).isNull();

            DescribeTopicPartitionsResponseData strayCursor = describe(raw, List.of(a), 10,
                    new DescribeTopicPartitionsRequestData.Cursor().setTopicName(b).setPartitionIndex(0));
            assertThat(strayCursor.topics()).hasSize(1).allSatisfy(t -> assertThat(Errors.forCode(t.errorCode()))
                    .isEqualTo(Errors.INVALID_REQUEST));
        }
        try (Admin admin = KafkaClients.admin(listener.port())) {
            // Admin pages through them itself, two partitions a response.
            List<TopicPartitionInfo> partitions = admin.describeTopics(List.of(a),
                    new DescribeTopicsOptions().partitionSizeLimitPerResponse(2)).allTopicNames().get().get(a)
                    .partitions();
            assertThat(partitions).extracting(TopicPartitionInfo::partition).containsExactly(0, 1, 2, 3, 4);
        }
    }
}
