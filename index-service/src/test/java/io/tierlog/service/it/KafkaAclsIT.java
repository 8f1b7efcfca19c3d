package io.tierlog.service.it;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
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
import org.apache.kafka.common.security.token.delegation.DelegationToken;
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
 * Kafka ACLs across two packaged instances on one hot volume, in token mode. Admin sends ACL and credential changes
 * to any instance it knows, so each check runs on the instance that did not make the change (found by its audit
 * line): an ACL created lets a token produce over HTTP on the other instance within 2 s; the ACL deleted, and the
 * instance that deleted it killed (SIGKILL) as soon as DeleteAcls is answered, the survivor refuses the token within
 * 2 s: an answered revocation is on the volume, not in the dead instance's memory. Before that, a DENY refuses the
 * token on the other instance within 2 s, and its deletion lifts it as fast. A default user's byte rate set on a
 * holds on b within 2 s, and a SCRAM credential, like a delegation token, logs in on the survivor of the instance
 * that made it, killed as it answered. Logs stay under {@code target/it/kafka-acls}, {@code target/it/kafka-quotas}
 * and {@code target/it/kafka-delegation-tokens}.
 */
class KafkaAclsIT {
    static final Path WORK = Path.of("target", "it", "kafka-acls").toAbsolutePath();
    static final String BOOTSTRAP = "tierlog_acls-" + Long.toHexString(System.nanoTime());
    static final long TWO_SECONDS = TimeUnit.SECONDS.toNanos(2);

    static Admin admin(int port) {
        return admin(port, "PLAIN", "org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"admin\" password=\"" + BOOTSTRAP + "\";");
    }

    static Admin admin(int port, String mechanism, String jaas) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        p.put(SaslConfigs.SASL_MECHANISM, mechanism);
        p.put(SaslConfigs.SASL_JAAS_CONFIG, jaas);
        return Admin.create(p);
    }

    /** Whether the SCRAM user {@code user} logs in to the listener on {@code port} with {@code password}. */
    static boolean scramLogin(int port, String user, String password) throws Exception {
        return login(() -> admin(port, "SCRAM-SHA-256", "org.apache.kafka.common.security.scram.ScramLoginModule "
                + "required username=\"" + user + "\" password=\"" + password + "\";"));
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

            String principal = "token:" + token.get("id").asText();
            AclBinding write = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL),
                    new AccessControlEntry("User:" + principal, "*", AclOperation.WRITE, AclPermissionType.ALLOW));
            String allowLine = "grant added principal=\"" + principal + "\" scope=produce:topic:orders";
            try (Admin admin = admin(both.kafkaA())) {
                admin.createAcls(List.of(write)).all().get();
                // Each change is checked on the instance that did not make it: it sees it by re-reading the volume.
                PackagedService other = both.other(both.auditedBy(allowLine));
                awaitStatus(other, secret, 200, "grant seen by the other instance");
                // A DENY wins over the ALLOW on the other instance within 2 s, and its deletion lifts it as fast.
                AclBinding deny = new AclBinding(write.pattern(), new AccessControlEntry(write.entry().principal(),
                        "*", AclOperation.WRITE, AclPermissionType.DENY));
                admin.createAcls(List.of(deny)).all().get();
                other = both.other(both.auditedBy(allowLine + " effect=deny"));
                awaitStatus(other, secret, 403, "denial seen by the other instance");
                assertThat(admin.deleteAcls(List.of(deny.toFilter())).all().get()).containsExactly(deny);
                other = both.other(both.auditedBy(allowLine.replace("added", "removed") + " effect=deny"));
                awaitStatus(other, secret, 200, "denial's deletion seen by the other instance");
                assertThat(admin.deleteAcls(List.of(write.toFilter())).all().get()).containsExactly(write);
            }
            PackagedService writer = both.auditedBy(allowLine.replace("added", "removed"));
            writer.process().destroyForcibly(); // SIGKILL at once: nothing it still had to write gets written
            // The survivor's view changes only by re-reading the volume: the deletion was there when the writer died.
            awaitStatus(both.other(writer), secret, 403, "deletion seen by the survivor");
            assertThat(writer.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    /** Waits up to 2 s for {@code s} to answer an HTTP produce with {@code token} with {@code status}. */
    private static void awaitStatus(PackagedService s, String token, int status, String what) throws Exception {
        long start = System.nanoTime();
        while (produce(s, token) != status) {
            assertThat(System.nanoTime() - start).as(what).isLessThan(TWO_SECONDS);
            Thread.sleep(50);
        }
    }

    /**
     * A default byte rate set on a holds on b within 2 s; then a SCRAM credential set through a (by whichever instance
     * Admin sends it to), that instance killed (SIGKILL) as soon as the alteration is answered, logs in on the other
     * within 2 s, and a wrong password does not.
     */
    @Test
    @Timeout(300)
    void aQuotaAndAScramCredentialSetOnOneInstanceHoldOnTheOtherAfterItsKill() throws Exception {
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

            ScramCredentialInfo sha256 = new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096);
            try (Admin admin = admin(both.kafkaA())) {
                admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("ivan", sha256, "ivan-pw")))
                        .all().get();
            }
            PackagedService writer = both.auditedBy("kafka scram-credential set user=ivan mechanism=SCRAM-SHA-256 "
                    + "iterations=4096");
            writer.process().destroyForcibly(); // SIGKILL at once: the credential is on the volume or nowhere
            int survivor = both.kafkaPort(both.other(writer));
            start = System.nanoTime();
            while (!scramLogin(survivor, "ivan", "ivan-pw")) {
                assertThat(System.nanoTime() - start).as("credential seen by the survivor").isLessThan(TWO_SECONDS);
                Thread.sleep(50);
            }
            assertThat(scramLogin(survivor, "ivan", "not-ivans")).isFalse();
            assertThat(writer.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    /** Whether a delegation token logs in to the listener on {@code port} (SASL/SCRAM with {@code tokenauth}). */
    static boolean tokenLogin(int port, DelegationToken token) throws Exception {
        return login(() -> admin(port, "SCRAM-SHA-512", "org.apache.kafka.common.security.scram.ScramLoginModule "
                + "required username=\"" + token.tokenInfo().tokenId() + "\" password=\""
                + token.hmacAsBase64String() + "\" tokenauth=\"true\";"));
    }

    private static boolean login(java.util.function.Supplier<Admin> client) throws Exception {
        try (Admin admin = client.get()) {
            admin.describeCluster().clusterId().get();
            return true;
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.SaslAuthenticationException) {
                return false;
            }
            throw e;
        }
    }

    /**
     * A delegation token created through one instance (whichever Admin sends it to), that instance killed (SIGKILL)
     * as soon as it answers: the token logs in on the survivor (it was on the volume when its creator died), and once
     * its owner expires it there, the survivor refuses it.
     */
    @Test
    @Timeout(300)
    void aDelegationTokenOutlivesTheKillOfItsCreatorAndItsExpiryHoldsAtOnce() throws Exception {
        try (KafkaInstances both = KafkaInstances.start(WORK.resolveSibling("kafka-delegation-tokens"),
                "-Dtierlog.auth.mode=token", "-Dtierlog.auth.bootstrap-token=" + BOOTSTRAP,
                "-Dtierlog.auth.max-failures-per-minute=100000")) {
            ScramCredentialInfo sha256 = new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096);
            try (Admin admin = admin(both.kafkaA())) {
                admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("dora", sha256, "dora-pw")))
                        .all().get();
            }
            long start = System.nanoTime();
            while (!scramLogin(both.kafkaA(), "dora", "dora-pw") || !scramLogin(both.kafkaB(), "dora", "dora-pw")) {
                assertThat(System.nanoTime() - start).as("dora known to both").isLessThan(TWO_SECONDS);
                Thread.sleep(50);
            }
            String dora = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"dora\" "
                    + "password=\"dora-pw\";";
            DelegationToken token;
            try (Admin admin = admin(both.kafkaA(), "SCRAM-SHA-256", dora)) {
                token = admin.createDelegationToken().delegationToken().get();
            }
            PackagedService writer = both.auditedBy("kafka delegation-token create id=" + token.tokenInfo().tokenId()
                    + " owner=scram:dora maxAt=" + token.tokenInfo().maxTimestamp());
            writer.process().destroyForcibly(); // SIGKILL at once: the token is on the volume or nowhere
            PackagedService survivor = both.other(writer);
            int port = both.kafkaPort(survivor);
            assertThat(tokenLogin(port, token)).as("on the survivor").isTrue();

            try (Admin admin = admin(port, "SCRAM-SHA-256", dora)) {
                admin.expireDelegationToken(token.hmac(), new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1))
                        .expiryTimestamp().get();
            }
            assertThat(tokenLogin(port, token)).as("expired: refused at once").isFalse();
            assertThat(writer.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }
}
