package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.DescribeClientQuotasRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.apache.kafka.common.requests.DescribeClientQuotasResponse;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link KafkaRandomRequestsTest}'s random rounds as the bootstrap token, on connections authenticated with SASL/PLAIN:
 * the administrative APIs (ACLs, quotas, SCRAM credentials, broker configs) get past the access check into their
 * handlers. Its own data directory, so that what the rounds store (a random quota on the default user, a denying ACL)
 * reaches no other test.
 */
@QuarkusTest
@TestProfile(KafkaRandomAdminRequestsTest.AsAdmin.class)
class KafkaRandomAdminRequestsTest {
    static final String BOOTSTRAP = "tierlog_fuzz-" + UUID.randomUUID().toString().replace("-", "");

    public static class AsAdmin implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            String dir = "target/random-admin-requests-" + UUID.randomUUID();
            return Map.of("tierlog.data-dir", dir + "/hot", "tierlog.index-dir", dir + "/index",
                    "tierlog.cold.filesystem.dir", dir + "/cold", "tierlog.auth.mode", "token",
                    "tierlog.auth.bootstrap-token", BOOTSTRAP, "tierlog.auth.max-failures-per-minute", "100000");
        }
    }

    @Inject
    KafkaListener listener;

    @Test
    void everyAdministrativeRequestIsAnsweredWithAnErrorItNames() throws Exception {
        int port = listener.port();
        String three = KafkaListenerTest.unique("fuzz");
        String one = KafkaListenerTest.unique("fuzz");
        List<Uuid> ids = new ArrayList<>();
        try (Admin admin = KafkaClients.admin(port, BOOTSTRAP)) {
            admin.createTopics(List.of(new NewTopic(three, 3, (short) 1), new NewTopic(one, 1, (short) 1))).all().get();
            for (TopicDescription d : admin.describeTopics(List.of(three, one)).allTopicNames().get().values()) {
                ids.add(d.topicId());
            }
        }
        // A random SASL exchange on an authenticated connection ends it, as Kafka's does: the plain rounds send those.
        List<String> failures = KafkaRandomRequestsTest.rounds(() -> RawKafka.authenticated(port, BOOTSTRAP),
                List.of(three, one, "User:fuzz"), ids, Set.of(ApiKeys.SASL_HANDSHAKE, ApiKeys.SASL_AUTHENTICATE));
        assertThat(failures).as("requests answered wrongly").isEmpty();
    }

    /**
     * What the rounds found, named once: quota filters kafka-clients cannot read (a match type it does not know, an
     * exact match without a name).
     */
    @Test
    void aQuotaFilterKafkaClientsCannotReadIsAnInvalidRequest() throws Exception {
        try (RawKafka raw = RawKafka.authenticated(listener.port(), BOOTSTRAP)) {
            for (byte matchType : new byte[]{112, 0}) {
                DescribeClientQuotasResponse r = raw.call(new DescribeClientQuotasRequest(
                        new DescribeClientQuotasRequestData().setComponents(List.of(
                                new DescribeClientQuotasRequestData.ComponentData().setEntityType("user")
                                        .setMatchType(matchType).setMatch(null))), (short) 1));
                assertThat(r.data().errorCode()).as("match type %d", matchType)
                        .isEqualTo(Errors.INVALID_REQUEST.code());
            }
        }
    }
}
