package io.tierlog.service.kafka;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.TopicPartition;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A client-side assignor of the kind only the members can run: each member sends a label in its subscription's user
 * data; the leader gives every partition to the member with the smallest label and tells each member, in the
 * assignment's user data, which labels it saw. What every member was told is kept per label ({@link #told}).
 */
public class LabelledAssignor implements ConsumerPartitionAssignor, Configurable {
    public static final String LABEL = "labelled.label";
    /** Per label: the user data of the last assignment it received. */
    public static final Map<String, String> told = new ConcurrentHashMap<>();

    private String label;

    /** A classic consumer's settings for {@code group} with this assignor under {@code label}; callers add the rest. */
    public static Map<String, String> consumerConfig(String group, String label) {
        Map<String, String> c = new HashMap<>();
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        c.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, LabelledAssignor.class.getName());
        c.put(LABEL, label);
        return c;
    }

    @Override
    public void configure(Map<String, ?> configs) {
        label = (String) configs.get(LABEL);
    }

    @Override
    public String name() {
        return "labelled";
    }

    @Override
    public ByteBuffer subscriptionUserData(java.util.Set<String> topics) {
        return ByteBuffer.wrap(label.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
        TreeMap<String, String> memberByLabel = new TreeMap<>();
        List<TopicPartition> all = new ArrayList<>();
        groupSubscription.groupSubscription().forEach((member, subscription) -> {
            memberByLabel.put(StandardCharsets.UTF_8.decode(subscription.userData().duplicate()).toString(), member);
            for (String topic : subscription.topics()) {
                Integer count = metadata.partitionCountForTopic(topic);
                for (int p = 0; count != null && p < count; p++) {
                    TopicPartition tp = new TopicPartition(topic, p);
                    if (!all.contains(tp)) {
                        all.add(tp);
                    }
                }
            }
        });
        ByteBuffer saw = ByteBuffer.wrap(("leader-saw:" + String.join(",", memberByLabel.keySet()))
                .getBytes(StandardCharsets.UTF_8));
        Map<String, Assignment> out = new HashMap<>();
        memberByLabel.forEach((l, member) -> out.put(member,
                new Assignment(member.equals(memberByLabel.firstEntry().getValue()) ? all : List.of(), saw.duplicate())));
        return new GroupAssignment(out);
    }

    /** What {@link #told} records for an assignment the service made. */
    static final String SERVED = "served";

    @Override
    public void onAssignment(Assignment assignment, ConsumerGroupMetadata metadata) {
        // No user data: the service assigned it (a group it took over), not a leader running this assignor.
        told.put(label, assignment.userData() == null ? SERVED
                : StandardCharsets.UTF_8.decode(assignment.userData().duplicate()).toString());
    }
}
