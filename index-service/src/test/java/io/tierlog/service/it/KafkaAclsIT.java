package io.tierlog.service.it;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka ACLs across two packaged instances on one hot volume, in token mode: an ACL created on instance a's Kafka
 * listener lets a token produce over HTTP on instance b within 2 s; the ACL deleted on a, and a killed (SIGKILL)
 * as soon as DeleteAcls is answered, b refuses the token within 2 s: an answered revocation is on the volume, not in
 * a's memory. Before that, a DENY made on a refuses the token on b within 2 s, and its deletion lifts it as fast. A default user's byte rate set on a holds on b within 2 s. Logs stay under {@code target/it/kafka-acls}
 * and {@code target/it/kafka-quotas}.
 */
class KafkaAclsIT {
    static final Path WORK = Path.of("target", "it", "kafka-acls").toAbsolutePath();
    static final String BOOTSTRAP = "tierlog_acls-" + Long.toHexString(System.nanoTime());
    static final long TWO_SECONDS = TimeUnit.SECONDS.toNanos(2);

    static Admin admin(int port) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        p.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"admin\" password=\"" + BOOTSTRAP + "\";");
        return Admin.create(p);
    }

    /** The status of one produce over HTTP to {@code s} with {@code token}. */
    static int produce(PackagedService s, String token) throws Exception {
        HttpResponse<String> r = AccessIT.send(s, "POST", "/v1/topics/orders/records",
                "{\"records\":[{\"key\":\"k\",\"value\":1}]}", token);
        return r.statusCode();
    }

    @Test
    @Timeout(300)
    void anAclMadeOnOneInstanceGrantsOnTheOtherAndItsDeletionOutlivesTheKill() throws Exception {
        try (KafkaInstances both = KafkaInstances.start(WORK, "-Dtierlog.auth.mode=token",
                "-Dtierlog.auth.bootstrap-token=" + BOOTSTRAP, "-Dtierlog.auth.max-failures-per-minute=100000")) {
            PackagedService a = both.a();
            PackagedService b = both.b();
            assertThat(AccessIT.send(a, "POST", "/v1/topics", "{\"name\":\"orders\",\"partitions\":1}", BOOTSTRAP)
                    .statusCode()).isEqualTo(201);
            HttpResponse<String> minted = AccessIT.send(a, "POST", "/v1/tokens",
                    "{\"name\":\"acl-it\",\"scopes\":\"describe:topic:orders\"}", BOOTSTRAP);
            assertThat(minted.statusCode()).as(minted.body()).isEqualTo(201);
            JsonNode token = AccessIT.JSON.readTree(minted.body());
            String secret = token.get("token").asText();
            long start = System.nanoTime();
            while (produce(b, secret) == 401) { // b learns of the new token within its refresh interval
                assertThat(System.nanoTime() - start).as("token seen by b").isLessThan(TWO_SECONDS);
                Thread.sleep(50);
            }
            assertThat(produce(b, secret)).isEqualTo(403);

            AclBinding write = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL),
                    new AccessControlEntry("User:token:" + token.get("id").asText(), "*", AclOperation.WRITE,
                            AclPermissionType.ALLOW));
            try (Admin admin = admin(both.kafkaA())) {
                admin.createAcls(List.of(write)).all().get();
                start = System.nanoTime();
                while (produce(b, secret) != 200) {
                    assertThat(System.nanoTime() - start).as("grant seen by b").isLessThan(TWO_SECONDS);
                    Thread.sleep(50);
                }
                // A DENY made on a wins over the ALLOW on b within 2 s, and its deletion lifts it there as fast.
                AclBinding deny = new AclBinding(write.pattern(), new AccessControlEntry(write.entry().principal(),
                        "*", AclOperation.WRITE, AclPermissionType.DENY));
                admin.createAcls(List.of(deny)).all().get();
                start = System.nanoTime();
                while (produce(b, secret) != 403) {
                    assertThat(System.nanoTime() - start).as("denial seen by b").isLessThan(TWO_SECONDS);
                    Thread.sleep(50);
                }
                assertThat(admin.deleteAcls(List.of(deny.toFilter())).all().get()).containsExactly(deny);
                start = System.nanoTime();
                while (produce(b, secret) != 200) {
                    assertThat(System.nanoTime() - start).as("denial's deletion seen by b").isLessThan(TWO_SECONDS);
                    Thread.sleep(50);
                }
                assertThat(admin.deleteAcls(List.of(write.toFilter())).all().get()).containsExactly(write);
            }
            a.process().destroyForcibly(); // SIGKILL at once: nothing a still had to write gets written
            start = System.nanoTime();
            while (produce(b, secret) != 403) {
                assertThat(System.nanoTime() - start).as("deletion seen by b").isLessThan(TWO_SECONDS);
                Thread.sleep(50);
            }
            // b's view changes only by re-reading the volume: the deletion was there when a died.
            assertThat(a.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    @Timeout(300)
    void aQuotaSetOnOneInstanceHoldsOnTheOther() throws Exception {
        try (KafkaInstances both = KafkaInstances.start(WORK.resolveSibling("kafka-quotas"), "-Dtierlog.auth.mode=token",
                "-Dtierlog.auth.bootstrap-token=" + BOOTSTRAP, "-Dtierlog.auth.max-failures-per-minute=100000")) {
            PackagedService a = both.a();
            PackagedService b = both.b();
            assertThat(AccessIT.send(a, "POST", "/v1/topics", "{\"name\":\"orders\",\"partitions\":1}", BOOTSTRAP)
                    .statusCode()).isEqualTo(201);
            ClientQuotaEntity everyone = new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, null));
            try (Admin admin = admin(both.kafkaA())) {
                admin.alterClientQuotas(List.of(new ClientQuotaAlteration(everyone,
                        List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1.0))))).all().get();
            }
            long start = System.nanoTime();
            while (produce(b, BOOTSTRAP) != 429) { // one byte a second: b refuses once it knows the rate
                assertThat(System.nanoTime() - start).as("rate seen by b").isLessThan(TWO_SECONDS);
                Thread.sleep(50);
            }
        }
    }
}
