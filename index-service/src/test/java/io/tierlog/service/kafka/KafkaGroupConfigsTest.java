package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatResponse;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Kafka's group configs ({@code consumer.session.timeout.ms}, {@code consumer.heartbeat.interval.ms}) through
 * Admin's DescribeConfigs and IncrementalAlterConfigs on resource type GROUP, and their effect on members of the
 * consumer protocol: the heartbeat interval the coordinator gives (raw ConsumerGroupHeartbeat and a kafka-clients
 * consumer), and the session after which a silent member is removed. The test profile's default session is 6 s.
 * A share group's {@code share.record.lock.duration.ms} is its consumers' acquisition lock.
 */
@QuarkusTest
class KafkaGroupConfigsTest {
    static final long DEFAULT_SESSION_MS = 6_000;

    @Inject
    KafkaListener listener;

    private static AlterConfigOp set(String key, String value) {
        return new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET);
    }

    private static Config describe(Admin admin, ConfigResource group) throws Exception {
        return admin.describeConfigs(List.of(group)).all().get().get(group);
    }

    @Test
    void describedWithTheServiceDefaultsUntilSetThenAsSetAndBackAfterADelete() throws Exception {
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, KafkaListenerTest.unique("gc"));
        try (Admin admin = KafkaClients.admin(listener.port())) {
            Config before = describe(admin, group);
            assertThat(before.get("consumer.session.timeout.ms").value()).isEqualTo("6000");
            assertThat(before.get("consumer.heartbeat.interval.ms").value()).as("a third of the session").isEqualTo("2000");
            assertThat(before.get("consumer.session.timeout.ms").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
            assertThat(before.get("streams.num.warmup.replicas").value()).as("Kafka's default").isEqualTo("2");
            assertThat(before.get("streams.acceptable.recovery.lag").value()).isEqualTo("10000");
            assertThat(before.get("streams.task.offset.interval.ms").value()).isEqualTo("60000");
            assertThat(before.get("streams.num.standby.replicas").value()).isEqualTo("0");
            assertThat(before.get("streams.rack.aware.assignment.tags").value()).isEmpty();
            assertThat(before.get("streams.initial.rebalance.delay.ms").value()).as("the service's").isEqualTo("3000");

            admin.incrementalAlterConfigs(Map.of(group, List.of(set("consumer.session.timeout.ms", "20000"),
                    set("consumer.heartbeat.interval.ms", "4000"), set("streams.num.warmup.replicas", "5"),
                    set("streams.acceptable.recovery.lag", "500"),
                    set("streams.rack.aware.assignment.tags", "zone, cluster")))).all().get();
            Config after = describe(admin, group);
            assertThat(after.get("streams.num.warmup.replicas").value()).isEqualTo("5");
            assertThat(after.get("streams.num.warmup.replicas").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
            assertThat(after.get("streams.acceptable.recovery.lag").value()).isEqualTo("500");
            assertThat(after.get("streams.rack.aware.assignment.tags").value()).isEqualTo("zone,cluster");
            assertThat(after.get("consumer.session.timeout.ms").value()).isEqualTo("20000");
            assertThat(after.get("consumer.session.timeout.ms").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
            assertThat(after.get("consumer.heartbeat.interval.ms").value()).isEqualTo("4000");

            admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                    new ConfigEntry("consumer.heartbeat.interval.ms", ""), AlterConfigOp.OpType.DELETE)))).all().get();
            Config deleted = describe(admin, group);
            assertThat(deleted.get("consumer.heartbeat.interval.ms").value()).as("a third of 20 s, at most 5 s")
                    .isEqualTo("5000");
            assertThat(deleted.get("consumer.heartbeat.interval.ms").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        }
    }

    @Test
    void badValuesAndValidateOnlyChangeNothing() throws Exception {
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, KafkaListenerTest.unique("gc"));
        try (Admin admin = KafkaClients.admin(listener.port())) {
            for (AlterConfigOp bad : List.of(set("consumer.session.timeout.ms", "soon"),
                    set("consumer.session.timeout.ms", "10"), set("consumer.heartbeat.interval.ms", "6000"),
                    set("share.record.lock.duration.ms", "999"), set("streams.num.standby.replicas", "3"),
                    set("streams.session.timeout.ms", "10"), set("streams.assignment.interval.ms", "1000"),
                    set("streams.num.warmup.replicas", "21"), set("streams.task.offset.interval.ms", "1000"),
                    set("streams.acceptable.recovery.lag", "-1"), set("streams.rack.aware.assignment.tags", "a,a"),
                    set("share.session.timeout.ms", "10"), set("share.heartbeat.interval.ms", "45000"))) {
                assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(group, List.of(bad))).all().get())
                        .as(bad.configEntry().name() + "=" + bad.configEntry().value())
                        .isInstanceOf(ExecutionException.class).cause()
                        .isInstanceOf(InvalidConfigurationException.class)
                        .hasMessageContaining(bad.configEntry().name());
            }
            admin.incrementalAlterConfigs(Map.of(group, List.of(set("consumer.session.timeout.ms", "20000"))),
                    new AlterConfigsOptions().validateOnly(true)).all().get();
            assertThat(describe(admin, group).get("consumer.session.timeout.ms").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        }
    }

    /**
     * {@code share.record.lock.duration.ms} is a share group's own acquisition lock: its consumers are told it, and a
     * record one of them acquired and never acknowledged goes to another after it, not after the service's 30 s.
     */
    @Test
    void aShareGroupsRecordLockDurationIsItsConsumersAcquisitionLock() throws Exception {
        String topic = KafkaClients.topicWithRecords(listener.port(), "gc-lock", 1, 1);
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, KafkaListenerTest.unique("gc-lock"));
        try (Admin admin = KafkaClients.admin(listener.port())) {
            assertThat(describe(admin, group).get("share.record.lock.duration.ms").value()).isEqualTo("30000");
            admin.incrementalAlterConfigs(Map.of(group, List.of(set("share.auto.offset.reset", "earliest"),
                    set("share.record.lock.duration.ms", "2000")))).all().get();
            ConfigEntry lock = describe(admin, group).get("share.record.lock.duration.ms");
            assertThat(lock.value()).isEqualTo("2000");
            assertThat(lock.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
        }
        try (KafkaShareConsumer<String, String> holder = KafkaClients.shareConsumer(listener.port(), group.name(),
                "explicit", Map.of());
             KafkaShareConsumer<String, String> other = KafkaClients.shareConsumer(listener.port(), group.name(),
                     "explicit", Map.of())) {
            holder.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> held = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (held.isEmpty() && System.nanoTime() < deadline) {
                holder.poll(Duration.ofMillis(200)).forEach(held::add);
            }
            assertThat(held).hasSize(1);
            assertThat(holder.acquisitionLockTimeoutMs()).contains(2000);

            other.subscribe(List.of(topic)); // the holder never acknowledges: its lock runs out after 2 s
            List<ConsumerRecord<String, String>> redelivered = new ArrayList<>();
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (redelivered.isEmpty() && System.nanoTime() < deadline) {
                other.poll(Duration.ofMillis(200)).forEach(redelivered::add);
            }
            assertThat(redelivered).singleElement().satisfies(r -> {
                assertThat(r.offset()).isEqualTo(held.get(0).offset());
                assertThat(r.deliveryCount()).contains((short) 2);
            });
            redelivered.forEach(r -> other.acknowledge(r, AcknowledgeType.ACCEPT));
            other.commitSync();
        }
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                    new ConfigEntry("share.record.lock.duration.ms", ""), AlterConfigOp.OpType.DELETE)))).all().get();
            ConfigEntry lock = describe(admin, group).get("share.record.lock.duration.ms");
            assertThat(lock.value()).isEqualTo("30000");
            assertThat(lock.source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        }
    }

    @Test
    void aConsumerProtocolMemberGetsTheGroupsIntervalAndIsRemovedAfterTheGroupsSession() throws Exception {
        String topic = KafkaListenerTest.unique("gc-t");
        String group = KafkaListenerTest.unique("gc");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
            admin.incrementalAlterConfigs(Map.of(resource, List.of(set("consumer.session.timeout.ms", "1500"),
                    set("consumer.heartbeat.interval.ms", "500")))).all().get();

            long joined;
            try (RawKafka raw = new RawKafka(listener.port())) {
                ConsumerGroupHeartbeatResponse join = raw.call(new ConsumerGroupHeartbeatRequest.Builder(
                        new ConsumerGroupHeartbeatRequestData().setGroupId(group).setMemberId(Uuid.randomUuid().toString())
                                .setMemberEpoch(0).setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of(topic))
                                .setTopicPartitions(List.of())), ApiKeys.CONSUMER_GROUP_HEARTBEAT);
                joined = System.nanoTime();
                assertThat(join.data().errorCode()).isEqualTo(Errors.NONE.code());
                assertThat(join.data().heartbeatIntervalMs()).isEqualTo(500);
            }
            // Silent from here on: gone after the group's 1.5 s session, well before the default 6 s.
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!admin.describeConsumerGroups(List.of(group)).all().get().get(group).members().isEmpty()) {
                assertThat(System.nanoTime()).as("removed within 20 s").isLessThan(deadline);
                Thread.sleep(100); // the coordinator expires members when the group is next touched
            }
            assertThat(Duration.ofNanos(System.nanoTime() - joined)).as("removed on the group's session")
                    .isLessThan(Duration.ofMillis(DEFAULT_SESSION_MS));
        }

        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(listener.port(),
                Map.of("group.id", group, "group.protocol", "consumer"))) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (consumer.assignment().isEmpty()) {
                assertThat(System.nanoTime()).as("assigned within 30 s").isLessThan(deadline);
                consumer.poll(Duration.ofMillis(100));
            }
            double start = heartbeats(consumer);
            long from = System.nanoTime();
            while (heartbeats(consumer) < start + 6) {
                assertThat(System.nanoTime() - from).as("6 heartbeats within 20 s").isLessThan(20_000_000_000L);
                consumer.poll(Duration.ofMillis(100));
            }
            // 6 at the group's 500 ms take about 3 s; at the default 2 s they would take 12 s.
            assertThat(Duration.ofNanos(System.nanoTime() - from)).isLessThan(Duration.ofSeconds(8));
        }
    }

    private static double heartbeats(KafkaConsumer<?, ?> consumer) {
        for (Map.Entry<MetricName, ? extends Metric> e : consumer.metrics().entrySet()) {
            if (e.getKey().name().equals("heartbeat-total") && e.getKey().group().equals("consumer-coordinator-metrics")) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        throw new AssertionError("no heartbeat-total metric");
    }
}
