package io.tierlog.log;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NamesTest {
    @ParameterizedTest
    @ValueSource(strings = {"..", ".", "a/b", "../etc", "%2e%2e", "a\\b", "", " ", "a b", "topic!", "tópico", "a\u0000b",
            "/abs", "..."+"/x"})
    void rejectsNamesThatCouldEscapeTheDataDirectoryOrBreakKafkasRule(String name) {
        assertThat(Names.isValid(name)).isFalse();
        assertThatThrownBy(() -> Names.requireValidTopic(name)).isInstanceOf(TierlogException.class)
                .satisfies(e -> assertThat(((TierlogException) e).type()).isEqualTo(ErrorType.INVALID_TOPIC));
        assertThatThrownBy(() -> Names.requireValidGroup(name)).isInstanceOf(TierlogException.class)
                .satisfies(e -> assertThat(((TierlogException) e).type()).isEqualTo(ErrorType.INVALID_GROUP));
        assertThatThrownBy(() -> new TopicPartition(name, 0)).isInstanceOf(TierlogException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "orders", "Orders.v2", "my_topic-1", "...", "..a", "a..", "-", "_"})
    void acceptsKafkaLegalNames(String name) {
        assertThat(Names.isValid(name)).isTrue();
        assertThat(Names.requireValidTopic(name)).isEqualTo(name);
    }

    @Test
    void lengthLimitIs249() {
        assertThat(Names.isValid("a".repeat(249))).isTrue();
        assertThat(Names.isValid("a".repeat(250))).isFalse();
        assertThatThrownBy(() -> Names.requireValidTopic("b".repeat(250)))
                .hasMessageContaining("invalid").hasMessageContaining("249");
    }

    @Test
    void nullIsInvalid() {
        assertThat(Names.isValid(null)).isFalse();
        assertThatThrownBy(() -> Names.requireValidTopic(null)).hasMessageContaining("null");
    }

    @Test
    void partitionDirectoryIsKafkasTopicDashPartition() {
        assertThat(new TopicPartition("orders", 3).dirName()).isEqualTo("orders-3");
        assertThatThrownBy(() -> new TopicPartition("orders", -1)).isInstanceOf(IllegalArgumentException.class);
    }
}
