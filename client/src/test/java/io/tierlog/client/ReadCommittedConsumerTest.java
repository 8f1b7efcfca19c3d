package io.tierlog.client;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The consumer at {@link ConsumerConfig.Isolation#READ_COMMITTED} against the packaged service, its topic written by
 * kafka-clients' transactional producer over the Kafka listener: only committed transactions' records, its end at an
 * open transaction (the last stable offset), and the held-back records once that transaction commits.
 */
@Tag("slow")
class ReadCommittedConsumerTest {
    @Test
    void aReadCommittedConsumerReadsCommittedTransactionsOnlyAndWaitsForAnOpenOne() throws Exception {
        int kafkaPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            kafkaPort = s.getLocalPort();
        }
        try (TestService service = TestService.start("read-committed", "-Dtierlog.kafka.enabled=true",
                "-Dtierlog.kafka.port=" + kafkaPort, "-Dtierlog.kafka.host=127.0.0.1",
                "-Dtierlog.kafka.advertised-host=127.0.0.1")) {
            TierlogClient client = service.adminClient();
            String topic = TestService.uniqueName("txn");
            client.admin().createTopic(topic, 1, null);
            TopicPartition tp = new TopicPartition(topic, 0);
            try (KafkaProducer<String, String> txn = transactional(kafkaPort)) {
                txn.initTransactions();
                txn.beginTransaction();
                send(txn, topic, "a0", "a1");
                txn.commitTransaction();
                txn.beginTransaction();
                send(txn, topic, "x0");
                txn.abortTransaction();
                txn.beginTransaction();
                send(txn, topic, "c0");
                txn.commitTransaction();
                txn.beginTransaction();
                send(txn, topic, "t0");                  // left open for now: offset 7

                ConsumerConfig committed = ConsumerConfig.defaults().withIsolation(ConsumerConfig.Isolation.READ_COMMITTED);
                for (boolean batches : List.of(true, false)) {
                    try (Consumer c = client.consumer(committed.withRecordBatches(batches))) {
                        c.assign(List.of(tp));
                        c.seekToBeginning(List.of(tp));
                        assertThat(read(c, 3)).as("batches %s", batches).containsExactly("a0", "a1", "c0");
                        c.seekToEnd(List.of(tp));
                        assertThat(c.position(tp)).as("the end is the open transaction").isEqualTo(7);
                    }
                }
                try (Consumer c = client.consumer(ConsumerConfig.defaults())) {
                    c.assign(List.of(tp));
                    c.seekToBeginning(List.of(tp));
                    assertThat(read(c, 5)).containsExactly("a0", "a1", "x0", "c0", "t0");
                }
                try (Consumer c = client.consumer(committed)) {
                    c.assign(List.of(tp));
                    c.seek(tp, 7);
                    assertThat(c.poll(Duration.ofMillis(300))).as("held back by the open transaction").isEmpty();
                    txn.commitTransaction();
                    assertThat(read(c, 1)).containsExactly("t0");
                }
            }
        }
    }

    private static KafkaProducer<String, String> transactional(int port) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TestService.uniqueName("rc"));
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        p.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"admin\" password=\"" + TestService.ADMIN_TOKEN + "\";");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private static void send(KafkaProducer<String, String> txn, String topic, String... values) throws Exception {
        for (String v : values) {
            txn.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0, null, v)).get();
        }
    }

    /** Polls until {@code n} records came (or 20 s passed); their values. */
    private static List<String> read(Consumer c, int n) {
        List<String> out = new ArrayList<>();
        Instant deadline = Instant.now().plusSeconds(20);
        while (out.size() < n && Instant.now().isBefore(deadline)) {
            c.poll(Duration.ofMillis(200)).forEach(r -> out.add(new String(r.value(), StandardCharsets.UTF_8)));
        }
        return out;
    }
}
