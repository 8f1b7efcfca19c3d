package io.tierlog.client;

import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The client's murmur2 partitioner is kafka-clients', bit for bit, so keys land where a Kafka producer puts them. */
class KafkaPartitionerTest {
    @Test
    void murmur2IsKafkasForEveryLengthModuloFour() {
        Random random = new Random(42);
        for (int i = 0; i < 5_000; i++) {
            byte[] key = new byte[random.nextInt(64)];
            random.nextBytes(key);
            assertThat(KafkaPartitioner.murmur2(key)).as("length %d", key.length).isEqualTo(Utils.murmur2(key));
            int partitions = 1 + random.nextInt(1024);
            assertThat(KafkaPartitioner.partitionForKey(key, partitions))
                    .isEqualTo(BuiltInPartitioner.partitionForKey(key, partitions));
        }
    }

    @Test
    void theReadmesExampleKeyLandsOnPartitionOne() {
        assertThat(KafkaPartitioner.partitionForKey("user-42".getBytes(StandardCharsets.UTF_8), 3)).isEqualTo(1);
    }
}
