package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.tierlog.access.Scopes;
import io.tierlog.service.security.AccessControl;
import io.tierlog.service.AdminRoundsProfile;
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
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link KafkaRandomRequestsTest}'s random rounds as an administrator's token, on connections authenticated with
 * SASL/PLAIN: the administrative APIs (ACLs, quotas, SCRAM credentials, delegation tokens, broker configs) get past the
 * access check into their handlers. In a data directory of its own ({@link AdminRoundsProfile}).
 */
@QuarkusTest
@TestProfile(AdminRoundsProfile.class)
class KafkaRandomAdminRequestsTest {
    private static final String BOOTSTRAP = AdminRoundsProfile.BOOTSTRAP;

    @Inject
    KafkaListener listener;
    @Inject
    AccessControl access;

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
        RandomRequestData.Known known = new RandomRequestData.Known(List.of(three, one, "User:fuzz"), ids, List.of(),
                List.of(), List.of());
        // A minted administrator rather than the bootstrap token, which Kafka could not name as a delegation tokens'
        // owner: the delegation-token APIs then get into their handlers too.
        String administrator = access.tokens().mint("fuzz-admin", Scopes.parse("admin:cluster"), null).secret();
        List<String> failures = KafkaRandomRequestsTest.rounds(() -> RawKafka.authenticated(port, administrator),
                known,
                Set.of(ApiKeys.SASL_HANDSHAKE, ApiKeys.SASL_AUTHENTICATE));
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
