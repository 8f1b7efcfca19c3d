package io.tierlog.service.kafka;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/** kafka-clients 4.4.0 pointed at the listener, configured as a test wants them. */
final class KafkaClients {
    private KafkaClients() {
    }

    static String bootstrap(int port) {
        return "127.0.0.1:" + port;
    }

    /** acks as given, so idempotence off (it needs acks=all; KafkaIdempotenceTest has it on), short timeouts. */
    static KafkaProducer<String, String> producer(int port, String acks, String compression) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(port));
        p.put(ProducerConfig.ACKS_CONFIG, acks);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /** A new topic named from {@code prefix}, with {@code perPartition} records in each partition. */
    static String topicWithRecords(int port, String prefix, int partitions, int perPartition) throws Exception {
        String topic = KafkaListenerTest.unique(prefix);
        try (Admin admin = admin(port)) {
            admin.createTopics(java.util.List.of(new org.apache.kafka.clients.admin.NewTopic(topic, partitions,
                    (short) 1))).all().get();
        }
        produceToEachPartition(port, topic, partitions, 0, perPartition);
        return topic;
    }

    /** {@code perPartition} records to each of the topic's partitions, values "p-i", all acknowledged. */
    static void produceToEachPartition(int port, String topic, int partitions, int from, int perPartition) {
        try (KafkaProducer<String, String> producer = producer(port, "all", "none")) {
            for (int p = 0; p < partitions; p++) {
                for (int i = from; i < from + perPartition; i++) {
                    producer.send(new ProducerRecord<>(topic, p, null, p + "-" + i));
                }
            }
            producer.flush();
        }
    }

    static KafkaConsumer<String, String> consumer(int port, Map<String, String> extra) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(port));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.putAll(extra);
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    /** A share consumer of {@code group} in acknowledgement {@code mode} ({@code implicit} or {@code explicit}). */
    static KafkaShareConsumer<String, String> shareConsumer(int port, String group, String mode,
                                                            Map<String, String> extra) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(port));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put("share.acknowledgement.mode", mode);
        p.putAll(extra);
        return new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    static Admin admin(int port) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(port));
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return Admin.create(p);
    }

    /** An Admin client authenticated with SASL/PLAIN, {@code token} as the password. */
    static Admin admin(int port, String token) {
        return Admin.create(saslPlain(port, token));
    }

    /** assign() + seekToBeginning, then polls until {@code expected} records have arrived (or 30 s passed). */
    static List<ConsumerRecord<String, String>> readFromStart(int port, String topic, int partition, int expected) {
        return readFromStart(consumer(port, Map.of()), topic, partition, expected);
    }

    /** {@link #readFromStart(int, String, int, int)} with a consumer of {@code properties} (SASL ones, say). */
    static List<ConsumerRecord<String, String>> readFromStart(Properties properties, String topic, int partition,
                                                              int expected) {
        return readFromStart(new KafkaConsumer<>(properties, new StringDeserializer(), new StringDeserializer()),
                topic, partition, expected);
    }

    private static List<ConsumerRecord<String, String>> readFromStart(KafkaConsumer<String, String> reader,
                                                                      String topic, int partition, int expected) {
        try (KafkaConsumer<String, String> consumer = reader) {
            TopicPartition tp = new TopicPartition(topic, partition);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            List<ConsumerRecord<String, String>> out = new ArrayList<>();
            Instant deadline = Instant.now().plusSeconds(30);
            while (out.size() < expected && Instant.now().isBefore(deadline)) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
            return out;
        }
    }

    /**
     * The partition's values from its start to its end at {@code isolation} (read_committed: its last stable offset),
     * as the end stood when reading began: unlike a console consumer, no timeout to wait out to know that all came.
     */
    static List<String> readToEnd(int port, String topic, int partition, String isolation) {
        TopicPartition tp = new TopicPartition(topic, partition);
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(port,
                Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation))) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            Instant deadline = Instant.now().plusSeconds(60);
            while (consumer.position(tp) < end) {
                if (Instant.now().isAfter(deadline)) {
                    throw new AssertionError(tp + " not read to offset " + end + " within 60 s");
                }
                consumer.poll(Duration.ofMillis(200)).forEach(r -> values.add(r.value()));
            }
        }
        return values;
    }

    /**
     * kafka-clients registers its OAUTHBEARER SASL client as a JVM-wide security provider, once, from the class loader
     * that first loads it; every Quarkus test application has its own class loader, and a client would get another
     * application's provider ("Callback handler must be castable"). A test using OAUTHBEARER installs this one's.
     */
    static void useThisClassLoadersOAuthBearerProvider() {
        java.security.Security.removeProvider("SASL/OAUTHBEARER Client Provider");
        org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerSaslClientProvider.initialize();
    }

    /** Client settings for SASL/PLAIN with a Tierlog token as the password (the user name is not used). */
    static Properties saslPlain(int port, String token) {
        Properties p = sasl(port, "PLAIN");
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"anyone\" password=\"" + token + "\";");
        return p;
    }

    /** Client settings for SASL/OAUTHBEARER whose login callback presents {@code token} as it is. */
    static Properties oauthBearer(int port, String token) {
        useThisClassLoadersOAuthBearerProvider();
        Properties p = sasl(port, "OAUTHBEARER");
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
                + "required token=\"" + token + "\";");
        p.put(SaslConfigs.SASL_LOGIN_CALLBACK_HANDLER_CLASS, KafkaSaslTest.TierlogTokenCallback.class.getName());
        return p;
    }

    /** Client settings for SASL/SCRAM ({@code SCRAM-SHA-256} or {@code -512}) as the SCRAM user {@code user}. */
    static Properties scram(int port, String mechanism, String user, String password) {
        Properties p = sasl(port, mechanism);
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required "
                + "username=\"" + user + "\" password=\"" + password + "\";");
        return p;
    }

    /** SASL/SCRAM with a Kafka delegation token: its id as the user, its HMAC's Base64 as the password. */
    static Properties delegationToken(int port, String mechanism, String tokenId, String hmacBase64) {
        Properties p = sasl(port, mechanism);
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required "
                + "username=\"" + tokenId + "\" password=\"" + hmacBase64 + "\" tokenauth=\"true\";");
        return p;
    }

    private static Properties sasl(int port, String mechanism) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap(port));
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        p.put(SaslConfigs.SASL_MECHANISM, mechanism);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return p;
    }
}
