package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** DeleteGroups through kafka-clients' Admin, and OffsetForLeaderEpoch's answer for partitions without epochs. */
@QuarkusTest
class KafkaDeleteGroupsTest {
    @Inject
    KafkaListener listener;

    @Test
    void deleteGroupsRemovesAnEmptyGroupAndItsOffsetsAndRefusesOneWithMembers() throws Exception {
        String topic = KafkaListenerTest.unique("delgroups");
        String idle = KafkaListenerTest.unique("idle");
        String busy = KafkaListenerTest.unique("busy");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            try (KafkaProducer<String, String> producer = KafkaClients.producer(listener.port(), "all", "none")) {
                for (int i = 0; i < 10; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, "k", "v" + i)).get(); // offsets to commit within
                }
            }
            admin.alterConsumerGroupOffsets(idle, Map.of(tp, new OffsetAndMetadata(7))).all().get();
            admin.alterConsumerGroupOffsets(busy, Map.of(tp, new OffsetAndMetadata(3))).all().get();
            assertThat(admin.listConsumerGroupOffsets(idle).partitionsToOffsetAndMetadata().get())
                    .containsKey(tp);

            try (KafkaConsumer<String, String> member = KafkaClients.consumer(listener.port(),
                    Map.of("group.id", busy, "group.protocol", "consumer"))) {
                member.subscribe(List.of(topic));
                Instant deadline = Instant.now().plusSeconds(30);
                while (member.assignment().isEmpty() && Instant.now().isBefore(deadline)) {
                    member.poll(Duration.ofMillis(200));
                }
                assertThat(member.assignment()).containsExactly(tp);

                var result = admin.deleteConsumerGroups(List.of(idle, busy)).deletedGroups();
                result.get(idle).get();
                assertThatThrownBy(() -> result.get(busy).get()).isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(GroupNotEmptyException.class);
            }
            // The idle group is gone with its offsets; the busy one kept its offsets.
            assertThat(admin.listConsumerGroupOffsets(idle).partitionsToOffsetAndMetadata().get()).isEmpty();
            assertThat(admin.listConsumerGroupOffsets(busy).partitionsToOffsetAndMetadata().get().get(tp).offset())
                    .isEqualTo(3);
            assertThatThrownBy(() -> admin.deleteConsumerGroups(List.of(idle)).all().get())
                    .hasCauseInstanceOf(GroupIdNotFoundException.class);
        }
    }

    @Test
    void offsetForLeaderEpochAnswersUndefinedEpochsAsMetadataHasNone() throws Exception {
        String topic = KafkaListenerTest.unique("epochs");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection topics =
                new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
        for (String name : List.of(topic, "no-such-topic")) {
            OffsetForLeaderEpochRequestData.OffsetForLeaderTopic t =
                    new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(name);
            t.partitions().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0)
                    .setCurrentLeaderEpoch(-1).setLeaderEpoch(0));
            topics.add(t);
        }
        try (RawKafka raw = new RawKafka(listener.port())) {
            OffsetsForLeaderEpochResponse r = raw.call(OffsetsForLeaderEpochRequest.Builder.forConsumer(topics),
                    ApiKeys.OFFSET_FOR_LEADER_EPOCH);
            OffsetForLeaderEpochResponseData.EpochEndOffset known = r.data().topics().find(topic).partitions().get(0);
            assertThat(known.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(known.leaderEpoch()).isEqualTo(-1);
            assertThat(known.endOffset()).isEqualTo(-1);
            assertThat(r.data().topics().find("no-such-topic").partitions().get(0).errorCode())
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        }
    }
}
