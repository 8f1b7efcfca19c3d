package io.tierlog.ingest;

import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class PartitionerTest {
    /** murmur2 test vectors from Kafka's own UtilsTest, so the check does not rest on the code under test. */
    private static final Map<String, Integer> MURMUR2 = Map.of(
            "21", -973932308,
            "foobar", -790332482,
            "a-little-bit-long-string", -985981536,
            "a-little-bit-longer-string", -1486304829,
            "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971,
            "abc", 479470107);

    @Test
    void keyedRecordsLandWhereKafkasDefaultPartitionerPutsThem() {
        for (Map.Entry<String, Integer> e : MURMUR2.entrySet()) {
            byte[] key = e.getKey().getBytes(StandardCharsets.UTF_8);
            assertThat(Utils.murmur2(key)).isEqualTo(e.getValue());
            for (int partitions : new int[]{1, 2, 3, 7, 12, 100, 1024}) {
                int expected = (e.getValue() & 0x7fffffff) % partitions;
                assertThat(Partitioner.forKey(key, partitions)).as("%s over %d", e.getKey(), partitions).isEqualTo(expected);
                assertThat(BuiltInPartitioner.partitionForKey(key, partitions)).isEqualTo(expected);
            }
        }
        // A few everyday keys, against the formula Kafka documents: toPositive(murmur2(key)) % partitions.
        for (String k : List.of("user-42", "order-1", "", "ключ", "🙂")) {
            byte[] key = k.getBytes(StandardCharsets.UTF_8);
            assertThat(Partitioner.forKey(key, 6)).isEqualTo(Utils.toPositive(Utils.murmur2(key)) % 6);
        }
    }

    /** The slice form, used by the one-pass JSON parser on its shared key buffer, hashes exactly as kafka-clients. */
    @Test
    void aKeyInsideALargerArrayLandsWhereTheSameKeyAloneDoes() {
        java.util.Random random = new java.util.Random(27);
        for (int length = 0; length < 40; length++) {
            byte[] key = new byte[length];
            random.nextBytes(key);
            byte[] around = new byte[length + 7];
            random.nextBytes(around);
            System.arraycopy(key, 0, around, 3, length);
            for (int partitions : new int[]{1, 7, 1024}) {
                assertThat(Partitioner.forKey(around, 3, length, partitions)).as("length %d", length)
                        .isEqualTo(Utils.toPositive(Utils.murmur2(key)) % partitions);
            }
        }
    }

    @Test
    void unkeyedRecordsOfAProducerAlwaysLandOnThePartitionOfItsId() {
        Partitioner p = new Partitioner(123);
        ProduceRequest req = new ProduceRequest(List.of(), Optional.of(new ProducerRef("producer-a", 0, 0)));
        int expected = Partitioner.forKey("producer-a".getBytes(StandardCharsets.UTF_8), 8);
        for (int i = 0; i < 10; i++) {
            assertThat(p.forUnkeyed(req, 8)).isEqualTo(expected);
        }
    }

    @Test
    void unkeyedRequestsWithoutProducerRotateFromTheSeed() {
        Partitioner p = new Partitioner(5);
        ProduceRequest req = new ProduceRequest(List.of(), Optional.empty());
        assertThat(p.forUnkeyed(req, 4)).isEqualTo(1);
        assertThat(p.forUnkeyed(req, 4)).isEqualTo(2);
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 8; i++) {
            seen.add(p.forUnkeyed(req, 4));
        }
        assertThat(seen).containsExactlyInAnyOrder(0, 1, 2, 3);
        Partitioner negative = new Partitioner(-7);
        assertThat(negative.forUnkeyed(req, 3)).isBetween(0, 2);
    }
}
