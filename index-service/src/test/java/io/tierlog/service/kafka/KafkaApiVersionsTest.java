package io.tierlog.service.kafka;

import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code tierlog.kafka.transaction-version}: what ApiVersions offers and finalizes at each transaction protocol. */
class KafkaApiVersionsTest {
    @Test
    void protocol1OffersNoRequestVersionOfProtocol2AndFinalizesLevel1() {
        KafkaApiVersions v1 = new KafkaApiVersions(1);
        ApiVersionsResponseData r = v1.response(Errors.NONE);
        assertThat(r.apiKeys().find(ApiKeys.END_TXN.id).maxVersion()).isEqualTo((short) 4);
        assertThat(r.apiKeys().find(ApiKeys.TXN_OFFSET_COMMIT.id).maxVersion()).isEqualTo((short) 4);
        assertThat(v1.supports(ApiKeys.END_TXN, (short) 5)).isFalse();
        assertThat(r.finalizedFeatures().find("transaction.version").maxVersionLevel()).isEqualTo((short) 1);
    }

    @Test
    void protocol2OffersEndTxn5AndTxnOffsetCommit5AndFinalizesLevel2() {
        KafkaApiVersions v2 = new KafkaApiVersions(2);
        ApiVersionsResponseData r = v2.response(Errors.NONE);
        assertThat(r.apiKeys().find(ApiKeys.END_TXN.id).maxVersion()).isEqualTo((short) 5);
        assertThat(r.apiKeys().find(ApiKeys.TXN_OFFSET_COMMIT.id).maxVersion()).isEqualTo((short) 5);
        assertThat(v2.supports(ApiKeys.TXN_OFFSET_COMMIT, (short) 6)).as("topic ids").isFalse();
        assertThat(r.finalizedFeatures().find("transaction.version").maxVersionLevel()).isEqualTo((short) 2);
        assertThat(r.supportedFeatures().find("transaction.version").maxVersion()).isEqualTo((short) 2);
    }

    @Test
    void anotherTransactionVersionIsRefusedAtStart() {
        assertThatThrownBy(() -> new KafkaApiVersions(3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tierlog.kafka.transaction-version");
    }
}
