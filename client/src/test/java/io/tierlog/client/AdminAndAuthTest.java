package io.tierlog.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Admin's topics, groups and tokens, and the two ways to authenticate, against the service in token mode. */
@Tag("slow")
class AdminAndAuthTest {
    @Test
    void topicsAreCreatedListedDescribedAlteredAndDeleted() throws Exception {
        Admin admin = TestService.shared().adminClient().admin();
        String topic = TestService.uniqueName("admin");
        Admin.TopicDescription created = admin.createTopic(topic, 3, Map.of("retention.ms", 3_600_000));
        assertThat(created.partitions()).isEqualTo(3);
        assertThat(created.config()).containsEntry("retention.ms", 3_600_000);
        assertThat(admin.listTopics()).contains(new Admin.TopicSummary(topic, 3));
        assertThatThrownBy(() -> admin.createTopic(topic, 3, null)).isInstanceOfSatisfying(ProblemException.class,
                p -> assertThat(p.type()).isEqualTo("topic-exists"));
        assertThat(admin.alterTopicConfig(topic, Map.of("retention.ms", 7_200_000))).containsEntry("retention.ms", 7_200_000);
        assertThat(admin.describeTopic(topic).partitionStates()).hasSize(3)
                .allMatch(s -> s.highWatermark() == 0 && s.logStartOffset() == 0);
        admin.deleteTopic(topic);
        assertThatThrownBy(() -> admin.describeTopic(topic)).isInstanceOfSatisfying(ProblemException.class,
                p -> assertThat(p.status()).isEqualTo(404));
    }

    @Test
    void groupOffsetsAreCommittedResetAndDeleted() throws Exception {
        TierlogClient client = TestService.shared().adminClient();
        Admin admin = client.admin();
        String topic = TestService.uniqueName("offsets");
        String group = TestService.uniqueName("g");
        admin.createTopic(topic, 2, null);
        try (Producer p = client.producer(ProducerConfig.defaults())) {
            for (int i = 0; i < 10; i++) {
                p.send(new ProducerRecord(topic, i % 2, null, new byte[]{(byte) i}, null, null));
            }
            p.flush();
        }
        admin.commitOffsets(group, Map.of(new TopicPartition(topic, 0), 2L));
        assertThat(admin.groupOffsets(group)).containsEntry(new TopicPartition(topic, 0), 2L);
        assertThat(admin.groupLag(group).totalLag()).isEqualTo(3);
        assertThat(admin.listGroups()).extracting(Admin.GroupSummary::group).contains(group);
        assertThat(admin.resetGroupOffsets(group, List.of(topic), "latest", null))
                .containsEntry(new TopicPartition(topic, 0), 5L).containsEntry(new TopicPartition(topic, 1), 5L);
        admin.deleteGroup(group);
        assertThatThrownBy(() -> admin.describeGroup(group)).isInstanceOfSatisfying(ProblemException.class,
                p -> assertThat(p.type()).isEqualTo("unknown-group"));
    }

    @Test
    void aMintedTokenWorksUntilRevokedAndTheSupplierIsAskedForEveryRequest() throws Exception {
        TestService service = TestService.shared();
        Admin admin = service.adminClient().admin();
        String topic = TestService.uniqueName("tokens");
        admin.createTopic(topic, 1, null);
        Admin.CreatedToken minted = admin.createToken(TestService.uniqueName("reader"), "describe:topic:" + topic, null);
        assertThat(minted.token()).isNotBlank();
        assertThat(admin.listTokens()).extracting(Admin.TokenInfo::id).contains(minted.id());

        AtomicInteger asked = new AtomicInteger();
        TierlogClient reader = TierlogClient.builder().url(service.url())
                .tokenSupplier(() -> {
                    asked.incrementAndGet();
                    return minted.token();
                }).build();
        assertThat(reader.admin().describeTopic(topic).name()).isEqualTo(topic);
        assertThat(reader.admin().describeTopic(topic).name()).isEqualTo(topic);
        assertThat(asked.get()).isEqualTo(2);
        assertThatThrownBy(() -> reader.admin().createTopic(TestService.uniqueName("x"), 1, null))
                .isInstanceOfSatisfying(ProblemException.class, p -> {
                    assertThat(p.type()).isEqualTo("forbidden");
                    assertThat(p.body().path("operation").asText()).isEqualTo("create");
                });

        admin.revokeToken(minted.id());
        assertThat(admin.listTokens()).extracting(Admin.TokenInfo::id).doesNotContain(minted.id());
        GroupConsumerTest.await(() -> {
            try {
                reader.admin().describeTopic(topic);
                return false;
            } catch (ProblemException p) {
                return p.status() == 401 && p.type().equals("unauthorized");
            }
        }, "the revoked token refused (within 2 s)");
        TierlogClient nobody = TierlogClient.builder().url(service.url()).build();
        assertThatThrownBy(() -> nobody.admin().listTopics()).isInstanceOfSatisfying(ProblemException.class,
                p -> assertThat(p.status()).isEqualTo(401));
    }
}
