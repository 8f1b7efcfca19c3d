package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.tierlog.access.GrantStore;
import io.tierlog.access.Secrets;
import io.tierlog.service.TokenModeProfile;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.security.AccessControl;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.io.Writer;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Kafka's ACL APIs over Tierlog's grants, in token mode against the listener: an ACL created with Admin lets a token
 * that lacked the scope produce on its already open connection, and deleting it refuses the next send there; what
 * Tierlog cannot store as a grant (DENY on the cluster, a host name, an operation it does not separate, a principal it
 * does not know) is refused and stores nothing; an ACL for one host holds for callers from that address only; a DENY
 * takes a scope away from a token that has it, on its open connection and over HTTP, until it is deleted; only the
 * administrator lists or changes ACLs; a group's READ is read and commit;
 * {@code User:*} with a prefix reaches every caller; and kafka-acls (AclCommand, kafka-tools 4.4.0) adds and lists.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class KafkaAclsTest {
    @Inject
    KafkaListener listener;
    @Inject
    AccessControl access;
    @Inject
    TierlogConfig config;

    private static MintedToken mint(String scopes) {
        return MintedToken.mint("kafka-acls", scopes);
    }

    private Admin administrator() {
        return KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP);
    }

    private KafkaProducer<String, String> producer(String secret) {
        Properties p = KafkaClients.saslPlain(listener.port(), secret);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private static AclBinding allow(String principal, ResourceType type, String name, PatternType pattern,
                                    AclOperation op) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW));
    }

    private static AclBindingFilter of(String principal) {
        return new AclBindingFilter(ResourcePatternFilter.ANY,
                new AccessControlEntryFilter(principal, null, AclOperation.ANY, AclPermissionType.ANY));
    }

    @Test
    void anAclGrantsOnAnOpenConnectionAndItsDeletionRefusesTheNextRequest() throws Exception {
        String topic = KafkaListenerTest.unique("acl");
        MintedToken token = mint("describe:topic:" + topic);
        try (Admin admin = administrator(); KafkaProducer<String, String> producer = producer(token.secret())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, 0, "k", "before")).get())
                    .hasCauseInstanceOf(TopicAuthorizationException.class);

            AclBinding write = allow(token.kafkaPrincipal(), ResourceType.TOPIC, topic, PatternType.LITERAL,
                    AclOperation.WRITE);
            admin.createAcls(List.of(write)).all().get();
            assertThat(producer.send(new ProducerRecord<>(topic, 0, "k", "granted")).get().offset()).isZero();
            assertThat(admin.describeAcls(of(token.kafkaPrincipal())).values().get()).containsExactly(write);

            Collection<AclBinding> deleted = admin.deleteAcls(List.of(of(token.kafkaPrincipal()))).all().get();
            assertThat(deleted).containsExactly(write);
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, 0, "k", "after")).get())
                    .hasCauseInstanceOf(TopicAuthorizationException.class);
            assertThat(admin.describeAcls(of(token.kafkaPrincipal())).values().get()).isEmpty();
        }
        // Durable: a store reading the volume afresh (another instance, or this one restarted) has no grant left.
        GrantStore reread = new GrantStore(GrantStore.directoryIn(config.dataDir()), Clock.systemUTC(),
                new Secrets(new SecureRandom()));
        assertThat(reread.list()).noneMatch(g -> g.principal().equals(token.principal()));
    }

    @Test
    void aDenyTakesAScopeAwayOnAnOpenConnectionAndOverHttpUntilItIsDeleted() throws Exception {
        String topic = KafkaListenerTest.unique("acl-deny");
        MintedToken token = mint("produce:topic:" + topic);
        AclBinding deny = new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                new AccessControlEntry(token.kafkaPrincipal(), "*", AclOperation.WRITE, AclPermissionType.DENY));
        try (Admin admin = administrator(); KafkaProducer<String, String> producer = producer(token.secret())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            assertThat(producer.send(new ProducerRecord<>(topic, 0, "k", "own scope")).get().offset()).isZero();

            admin.createAcls(List.of(deny)).all().get();
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, 0, "k", "denied")).get())
                    .hasCauseInstanceOf(TopicAuthorizationException.class);
            given().header("Authorization", "Bearer " + token.secret()).contentType(ContentType.JSON)
                    .body("{\"records\": [{\"value\": 1}]}").post("/v1/topics/" + topic + "/records")
                    .then().statusCode(403);
            assertThat(admin.describeAcls(new AclBindingFilter(ResourcePatternFilter.ANY, new AccessControlEntryFilter(
                    token.kafkaPrincipal(), null, AclOperation.ANY, AclPermissionType.DENY))).values().get())
                    .containsExactly(deny);
            assertThat(access.grants().list()).filteredOn(g -> g.principal().equals(token.principal()))
                    .singleElement().satisfies(g -> assertThat(g.deny()).isTrue());

            assertThat(admin.deleteAcls(List.of(deny.toFilter())).all().get()).containsExactly(deny);
            assertThat(producer.send(new ProducerRecord<>(topic, 0, "k", "allowed again")).get().offset())
                    .isEqualTo(1);
        }
    }

    @Test
    void anAclThatIsNoGrantIsRefusedAndStoresNothing() throws Exception {
        String topic = KafkaListenerTest.unique("acl-bad");
        MintedToken token = mint("describe:topic:" + topic);
        String p = token.kafkaPrincipal();
        List<AclBinding> refused = List.of(
                new AclBinding(new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL),
                        new AccessControlEntry(p, "*", AclOperation.ALL, AclPermissionType.DENY)),
                new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                        new AccessControlEntry(p, "db.example.com", AclOperation.READ, AclPermissionType.ALLOW)),
                allow(p, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.DESCRIBE_CONFIGS),
                allow(p, ResourceType.GROUP, topic, PatternType.LITERAL, AclOperation.DESCRIBE),
                allow(p, ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, AclOperation.ALTER),
                allow("User:mail:alice", ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.READ),
                allow(p, ResourceType.DELEGATION_TOKEN, topic, PatternType.LITERAL, AclOperation.DESCRIBE));
        try (Admin admin = administrator()) {
            var results = admin.createAcls(refused).values();
            for (AclBinding acl : refused) {
                assertThatThrownBy(() -> results.get(acl).get()).as("%s", acl)
                        .hasCauseInstanceOf(InvalidRequestException.class);
            }
            assertThat(admin.describeAcls(AclBindingFilter.ANY).values().get())
                    .noneMatch(acl -> acl.pattern().name().equals(topic));
        }
        assertThat(access.grants().list()).noneMatch(g -> g.principal().equals(token.principal()));
    }

    @Test
    void onlyTheAdministratorListsOrChangesAcls() throws Exception {
        String topic = KafkaListenerTest.unique("acl-who");
        MintedToken token = mint("produce:topic:" + topic + " fetch:topic:" + topic);
        try (Admin admin = KafkaClients.admin(listener.port(), token.secret())) {
            assertThatThrownBy(() -> admin.describeAcls(AclBindingFilter.ANY).values().get())
                    .hasCauseInstanceOf(ClusterAuthorizationException.class);
            AclBinding self = allow(token.kafkaPrincipal(), ResourceType.CLUSTER, "kafka-cluster",
                    PatternType.LITERAL, AclOperation.ALL);
            assertThatThrownBy(() -> admin.createAcls(List.of(self)).all().get())
                    .hasCauseInstanceOf(ClusterAuthorizationException.class);
            assertThatThrownBy(() -> admin.deleteAcls(List.of(AclBindingFilter.ANY)).all().get())
                    .hasCauseInstanceOf(ClusterAuthorizationException.class);
        }
        assertThat(access.grants().list()).noneMatch(g -> g.principal().equals(token.principal()));
    }

    @Test
    void aGroupReadLetsAConsumerJoinAndCommitAndAWildcardPrefixReachesEveryCaller() throws Exception {
        String prefix = KafkaListenerTest.unique("aclpre") + "-";
        String topic = prefix + "t";
        String group = KafkaListenerTest.unique("acl-g");
        MintedToken token = mint("describe:topic:unrelated");
        AclBinding topicRead = allow("User:*", ResourceType.TOPIC, prefix, PatternType.PREFIXED, AclOperation.READ);
        AclBinding groupRead = allow(token.kafkaPrincipal(), ResourceType.GROUP, group, PatternType.LITERAL,
                AclOperation.READ);
        try (Admin admin = administrator()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            try (KafkaProducer<String, String> producer = producer(TokenModeProfile.BOOTSTRAP)) {
                producer.send(new ProducerRecord<>(topic, 0, "k", "v")).get();
            }
            admin.createAcls(List.of(topicRead, groupRead)).all().get();
            // One READ for the group, stored as the two scopes it is: read and commit.
            assertThat(access.grants().list()).filteredOn(g -> g.principal().equals(token.principal()))
                    .extracting(g -> g.scope().toString())
                    .containsExactly("commit:group:" + group, "read:group:" + group);
            assertThat(admin.describeAcls(of(token.kafkaPrincipal())).values().get()).containsExactly(groupRead);

            Properties p = KafkaClients.saslPlain(listener.port(), token.secret());
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                    new StringDeserializer())) {
                consumer.subscribe(List.of(topic));
                int read = 0;
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (read == 0 && System.nanoTime() < deadline) {
                    read += consumer.poll(Duration.ofMillis(500)).count();
                }
                assertThat(read).isEqualTo(1);
                TopicPartition tp = new TopicPartition(topic, 0);
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(1)));
                assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().get(tp)
                        .offset()).isEqualTo(1);
            }
            admin.deleteAcls(List.of(topicRead.toFilter(), groupRead.toFilter())).all().get();
            assertThat(access.grants().list()).noneMatch(g -> g.principal().equals(token.principal())
                    || g.principal().equals(GrantStore.EVERY_PRINCIPAL));
        }
    }

    @Test
    void kafkaAclsAddsAndLists() throws Exception {
        String topic = KafkaListenerTest.unique("acl-tool");
        MintedToken token = mint("describe:topic:" + topic);
        Path config = Files.createTempFile(Path.of("target"), "acl-tool", ".properties");
        Properties admin = KafkaClients.saslPlain(listener.port(), TokenModeProfile.BOOTSTRAP);
        try (Writer w = Files.newBufferedWriter(config)) {
            admin.store(w, null);
        }
        String bootstrap = KafkaClients.bootstrap(listener.port());
        KafkaToolsClasspath.run(null, "org.apache.kafka.tools.AclCommand", "--bootstrap-server", bootstrap,
                "--command-config", config.toString(), "--add", "--allow-principal", token.kafkaPrincipal(),
                "--operation", "Read", "--operation", "Write", "--topic", topic);
        String listed = String.join("\n", KafkaToolsClasspath.run(null, "org.apache.kafka.tools.AclCommand",
                "--bootstrap-server", bootstrap, "--command-config", config.toString(), "--list", "--topic", topic));
        assertThat(listed).contains("principal=" + token.kafkaPrincipal()).contains("operation=READ")
                .contains("operation=WRITE");
        assertThat(access.grants().list()).filteredOn(g -> g.principal().equals(token.principal()))
                .extracting(g -> g.scope().toString())
                .containsExactly("fetch:topic:" + topic, "produce:topic:" + topic);
    }

    @Test
    void anAclForOneHostHoldsForCallersFromThatAddressOnly() throws Exception {
        String topic = KafkaListenerTest.unique("acl-host");
        InetAddress second = InetAddress.getByName("127.0.0.2");
        MintedToken granted = mint("describe:topic:" + topic + "-other");
        MintedToken denied = mint("describe:topic:" + topic);
        AclBinding describeFromSecond = new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic,
                PatternType.LITERAL), new AccessControlEntry(granted.kafkaPrincipal(), "127.0.0.2",
                AclOperation.DESCRIBE, AclPermissionType.ALLOW));
        AclBinding denyFromSecond = new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                new AccessControlEntry(denied.kafkaPrincipal(), "127.0.0.2", AclOperation.DESCRIBE,
                        AclPermissionType.DENY));
        try (Admin admin = administrator()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            admin.createAcls(List.of(describeFromSecond, denyFromSecond)).all().get();

            assertThat(metadataError(granted, second, topic)).isEqualTo(Errors.NONE);
            assertThat(metadataError(granted, null, topic)).isEqualTo(Errors.TOPIC_AUTHORIZATION_FAILED);
            assertThat(httpStatus(granted, second, "/v1/topics/" + topic)).isEqualTo(200);
            assertThat(httpStatus(granted, null, "/v1/topics/" + topic)).isEqualTo(403);
            assertThat(metadataError(denied, second, topic)).isEqualTo(Errors.TOPIC_AUTHORIZATION_FAILED);
            assertThat(metadataError(denied, null, topic)).isEqualTo(Errors.NONE);
            assertThat(httpStatus(denied, second, "/v1/topics/" + topic)).isEqualTo(403);
            assertThat(admin.describeAcls(of(granted.kafkaPrincipal())).values().get())
                    .containsExactly(describeFromSecond);

            admin.deleteAcls(List.of(describeFromSecond.toFilter(), denyFromSecond.toFilter())).all().get();
            assertThat(metadataError(granted, second, topic)).isEqualTo(Errors.TOPIC_AUTHORIZATION_FAILED);
            assertThat(metadataError(denied, second, topic)).isEqualTo(Errors.NONE);
        }
    }

    /** The error a Metadata request naming {@code topic} gets, over SASL from {@code local} (null: 127.0.0.1). */
    private Errors metadataError(MintedToken token, InetAddress local, String topic) throws Exception {
        RawKafka connection = local == null ? new RawKafka(listener.port()) : new RawKafka(local, listener.port());
        try (RawKafka raw = RawKafka.authenticated(connection, token.secret())) {
            MetadataResponse answer = raw.call(new MetadataRequest.Builder(List.of(topic), false), (short) 12);
            return Errors.forCode(answer.data().topics().find(topic).errorCode());
        }
    }

    /** The status of an HTTP GET of {@code path} with {@code token}, from {@code local} (null: 127.0.0.1). */
    private static int httpStatus(MintedToken token, InetAddress local, String path) throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (Socket socket = local == null ? new Socket(loopback, RestAssured.port)
                : new Socket(loopback, RestAssured.port, local, 0)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                    + token.secret() + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            String statusLine = new java.io.BufferedReader(new java.io.InputStreamReader(socket.getInputStream(),
                    StandardCharsets.US_ASCII)).readLine();
            return Integer.parseInt(statusLine.split(" ")[1]);
        }
    }
}
