package io.tierlog.bench.groups;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * A Kafka consumer-group member in its own JVM, so that the benchmark can kill it with SIGKILL: a consumer closed in
 * process sends a leave even with {@code REMAIN_IN_GROUP} (a dynamic member of the KIP-848 protocol), so only a
 * killed process shows how long the group takes to notice a death. Arguments: bootstrap, group, topic. It creates
 * its consumer, prints {@code READY}, waits for a line on stdin and then subscribes and polls, printing
 * {@code OWNED p,p,...} after every assignment change and {@code TAKE p} for the first record of a partition after
 * it was assigned (no commits; it reads from the earliest offset). A second stdin line makes it leave and exit.
 */
public final class KafkaMemberMain {
    private KafkaMemberMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, args[1]);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "100");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Set<Integer> assigned = new TreeSet<>();
        Set<Integer> taken = new TreeSet<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            System.out.println("READY");
            System.out.flush();
            in.readLine();
            Thread stopper = new Thread(() -> {
                try {
                    in.readLine();
                } catch (Exception ignored) {
                    // stdin closed: leave too
                }
                consumer.wakeup();
            });
            stopper.setDaemon(true);
            stopper.start();
            consumer.subscribe(List.of(args[2]), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    partitions.forEach(tp -> {
                        assigned.remove(tp.partition());
                        taken.remove(tp.partition());
                    });
                    report(assigned);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    partitions.forEach(tp -> assigned.add(tp.partition()));
                    report(assigned);
                }
            });
            try {
                while (true) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(20))) {
                        if (assigned.contains(r.partition()) && taken.add(r.partition())) {
                            System.out.println("TAKE " + r.partition());
                            System.out.flush();
                        }
                    }
                }
            } catch (org.apache.kafka.common.errors.WakeupException leave) {
                // asked to leave: close() below sends the leave
            }
        }
    }

    private static void report(Set<Integer> assigned) {
        System.out.println("OWNED " + assigned.stream().map(String::valueOf).collect(Collectors.joining(",")));
        System.out.flush();
    }
}
