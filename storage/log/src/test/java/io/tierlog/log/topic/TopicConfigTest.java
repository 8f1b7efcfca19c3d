package io.tierlog.log.topic;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class TopicConfigTest {
    @Test
    void defaultsAreKafkasExceptSegmentTime() {
        TopicConfig d = TopicConfig.DEFAULTS;
        assertThat(d.retentionMs()).isEqualTo(7L * 24 * 3600 * 1000);
        assertThat(d.localRetentionMs()).isEqualTo(-2);
        assertThat(d.localRetentionBytes()).isEqualTo(-2);
        assertThat(d.effectiveLocalRetentionMs()).isEqualTo(7L * 24 * 3600 * 1000);
        assertThat(d.effectiveLocalRetentionBytes()).isEqualTo(-1);
        assertThat(d.segmentBytes()).isEqualTo(128L * 1024 * 1024);
        assertThat(d.maxMessageBytes()).isEqualTo(1048588);
        assertThat(d.toMap()).containsOnlyKeys(TopicConfig.KEYS);
        assertThat(TopicConfig.DEFAULTS.with(d.toMap())).isEqualTo(d);
    }

    @Test
    void acceptsNumbersNumericStringsAndUnlimited() {
        TopicConfig c = TopicConfig.DEFAULTS.with(Map.of("retention.ms", "-1", "segment.bytes", 4096,
                "segment.ms", 60_000L, "retention.bytes", -1, "max.message.bytes", " 2048 "));
        assertThat(c.retentionMs()).isEqualTo(-1);
        assertThat(c.segmentBytes()).isEqualTo(4096);
        assertThat(c.segmentMs()).isEqualTo(60_000);
        assertThat(c.maxMessageBytes()).isEqualTo(2048);
        assertThat(TopicConfig.DEFAULTS.with(Map.of("segment.ms", 1.0e4)).segmentMs()).isEqualTo(10_000);
    }

    @Test
    void unknownKeyIsInvalidConfigNamingTheKey() {
        TierlogException e = invalid(Map.of("retention.hours", 1));
        assertThat(e.getMessage()).contains("retention.hours");
        assertThat(e.extra()).containsEntry("key", "retention.hours");
    }

    @Test
    void localRetentionLargerThanTotalIsRejected() {
        assertThat(invalid(Map.of("retention.ms", 1000, "local.retention.ms", 2000)).extra())
                .containsEntry("key", "local.retention.ms");
        assertThat(invalid(Map.of("retention.ms", 1000, "local.retention.ms", -1)).extra())
                .containsEntry("key", "local.retention.ms");
        assertThat(invalid(Map.of("retention.bytes", 1000, "local.retention.bytes", 2000)).extra())
                .containsEntry("key", "local.retention.bytes");
        assertThat(invalid(Map.of("retention.bytes", 1000, "local.retention.bytes", -1)).extra())
                .containsEntry("key", "local.retention.bytes");
        // Equal is allowed, and anything local is allowed under an unlimited total.
        assertThat(TopicConfig.DEFAULTS.with(Map.of("retention.ms", 1000, "local.retention.ms", 1000)).localRetentionMs())
                .isEqualTo(1000);
        assertThat(TopicConfig.DEFAULTS.with(Map.of("retention.ms", -1, "local.retention.ms", -1)).localRetentionMs())
                .isEqualTo(-1);
    }

    @Test
    void localRetentionMinusTwoFollowsTheTotalWhateverItIsSetTo() {
        // Kafka's -2: setting only retention.ms (below the old one-day hot default) is accepted and applies hot too.
        TopicConfig oneHour = TopicConfig.DEFAULTS.with(Map.of("retention.ms", 3_600_000));
        assertThat(oneHour.localRetentionMs()).isEqualTo(-2);
        assertThat(oneHour.effectiveLocalRetentionMs()).isEqualTo(3_600_000);
        assertThat(oneHour.toMap()).containsEntry("local.retention.ms", -2L);
        TopicConfig bytes = TopicConfig.DEFAULTS.with(Map.of("retention.bytes", 5000, "local.retention.bytes", "-2"));
        assertThat(bytes.effectiveLocalRetentionBytes()).isEqualTo(5000);
        assertThat(TopicConfig.DEFAULTS.with(Map.of("retention.ms", -1)).effectiveLocalRetentionMs()).isEqualTo(-1);
        // An explicit value still wins, and -3 is no Kafka value.
        assertThat(oneHour.with(Map.of("local.retention.ms", 60_000)).effectiveLocalRetentionMs()).isEqualTo(60_000);
        assertThat(invalid(Map.of("local.retention.ms", -3)).extra()).containsEntry("key", "local.retention.ms");
        assertThat(invalid(Map.of("local.retention.bytes", -3)).extra()).containsEntry("key", "local.retention.bytes");
    }

    @Test
    void outOfRangeAndNonIntegerValuesAreRejectedNamingTheKey() {
        assertThat(invalid(Map.of("segment.bytes", 1023)).extra()).containsEntry("key", "segment.bytes");
        assertThat(invalid(Map.of("segment.bytes", 3L * 1024 * 1024 * 1024)).extra()).containsEntry("key", "segment.bytes");
        assertThat(invalid(Map.of("segment.ms", 0)).extra()).containsEntry("key", "segment.ms");
        assertThat(invalid(Map.of("max.message.bytes", 0)).extra()).containsEntry("key", "max.message.bytes");
        assertThat(invalid(Map.of("max.message.bytes", 1L << 40)).extra()).containsEntry("key", "max.message.bytes");
        assertThat(invalid(Map.of("retention.ms", 0)).extra()).containsEntry("key", "retention.ms");
        assertThat(invalid(Map.of("retention.ms", -2)).extra()).containsEntry("key", "retention.ms");
        assertThat(invalid(Map.of("retention.bytes", "lots")).extra()).containsEntry("key", "retention.bytes");
        assertThat(invalid(Map.of("segment.ms", 1.5)).extra()).containsEntry("key", "segment.ms");
        assertThat(invalid(Map.of("segment.ms", true)).extra()).containsEntry("key", "segment.ms");
    }

    @Test
    void compactionKeysHaveKafkasDefaultsAndMeanings() {
        TopicConfig d = TopicConfig.DEFAULTS;
        assertThat(d.cleanupPolicy()).isEqualTo("delete");
        assertThat(d.compacts()).isFalse();
        assertThat(d.deletesByRetention()).isTrue();
        assertThat(d.deleteRetentionMs()).isEqualTo(86_400_000L);
        assertThat(d.minCompactionLagMs()).isZero();
        assertThat(d.minCleanableDirtyRatio()).isEqualTo(0.5);
        assertThat(d.toMap()).containsEntry("cleanup.policy", "delete").containsEntry("min.cleanable.dirty.ratio", 0.5);

        TopicConfig compact = d.with(Map.of("cleanup.policy", "compact", "delete.retention.ms", "1000",
                "min.compaction.lag.ms", 5000, "min.cleanable.dirty.ratio", "0.25"));
        assertThat(compact.compacts()).isTrue();
        assertThat(compact.deletesByRetention()).isFalse();
        assertThat(compact.deleteRetentionMs()).isEqualTo(1000);
        assertThat(compact.minCompactionLagMs()).isEqualTo(5000);
        assertThat(compact.minCleanableDirtyRatio()).isEqualTo(0.25);
        assertThat(TopicConfig.DEFAULTS.with(compact.toMap())).isEqualTo(compact);
        // Kafka's list in either order, spaces or a JSON array: one canonical spelling.
        for (Object both : new Object[]{"compact,delete", "delete,compact", " delete , compact", java.util.List.of("delete", "compact")}) {
            TopicConfig c = d.with(Map.of("cleanup.policy", both));
            assertThat(c.cleanupPolicy()).as("%s", both).isEqualTo("compact,delete");
            assertThat(c.compacts() && c.deletesByRetention()).isTrue();
        }
        assertThat(d.with(Map.of("min.cleanable.dirty.ratio", 1)).minCleanableDirtyRatio()).isEqualTo(1.0);
        assertThat(d.with(Map.of("min.cleanable.dirty.ratio", 0)).minCleanableDirtyRatio()).isEqualTo(0.0);
    }

    @Test
    void badCompactionValuesAreRejectedNamingTheKey() {
        for (Object policy : new Object[]{"", "compacted", "compact,compact", "delete,", 1, java.util.List.of(1)}) {
            assertThat(invalid(Map.of("cleanup.policy", policy)).extra()).as("%s", policy)
                    .containsEntry("key", "cleanup.policy");
        }
        assertThat(invalid(Map.of("delete.retention.ms", -1)).extra()).containsEntry("key", "delete.retention.ms");
        assertThat(invalid(Map.of("delete.retention.ms", 1.5)).extra()).containsEntry("key", "delete.retention.ms");
        assertThat(invalid(Map.of("min.compaction.lag.ms", -5)).extra()).containsEntry("key", "min.compaction.lag.ms");
        for (Object ratio : new Object[]{-0.1, 1.01, "half", "NaN", true}) {
            assertThat(invalid(Map.of("min.cleanable.dirty.ratio", ratio)).extra()).as("%s", ratio)
                    .containsEntry("key", "min.cleanable.dirty.ratio");
        }
    }

    @Test
    void timestampTypeIsCreateTimeByDefaultAndTakesKafkasTwoSpellingsOnly() {
        assertThat(TopicConfig.DEFAULTS.logAppendTime()).isFalse();
        assertThat(TopicConfig.DEFAULTS.toMap()).containsEntry("message.timestamp.type", "CreateTime");
        TopicConfig c = TopicConfig.DEFAULTS.with(Map.of("message.timestamp.type", "LogAppendTime"));
        assertThat(c.logAppendTime()).isTrue();
        assertThat(c.toMap()).containsEntry("message.timestamp.type", "LogAppendTime");
        for (Object bad : new Object[]{"logappendtime", "AppendTime", "", 1}) {
            TierlogException e = invalid(Map.of("message.timestamp.type", bad));
            assertThat(e.extra()).containsEntry("key", "message.timestamp.type");
            assertThat(e.getMessage()).contains("CreateTime or LogAppendTime");
        }
    }

    private static TierlogException invalid(Map<String, ?> changes) {
        TierlogException e = catchThrowableOfType(TierlogException.class, () -> TopicConfig.DEFAULTS.with(changes));
        assertThat(e).as("config %s", changes).isNotNull();
        assertThat(e.type()).isEqualTo(ErrorType.INVALID_CONFIG);
        return e;
    }
}
