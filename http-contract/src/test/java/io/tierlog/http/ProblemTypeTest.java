package io.tierlog.http;

import io.tierlog.log.ErrorType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The slugs and statuses of docs/api.md, pinned: the engine's error kinds reach the wire unchanged. */
class ProblemTypeTest {
    @ParameterizedTest
    @CsvSource({
            "BAD_REQUEST, bad-request, 400",
            "INVALID_TOPIC, invalid-topic, 400",
            "INVALID_GROUP, invalid-group, 400",
            "INVALID_CONFIG, invalid-config, 400",
            "UNAUTHORIZED, unauthorized, 401",
            "FORBIDDEN, forbidden, 403",
            "TOO_MANY_FAILURES, too-many-failures, 429",
            "UNKNOWN_TOPIC, unknown-topic, 404",
            "UNKNOWN_PARTITION, unknown-partition, 404",
            "NOT_FOUND, not-found, 404",
            "TOPIC_EXISTS, topic-exists, 409",
            "OUT_OF_ORDER_SEQUENCE, out-of-order-sequence, 409",
            "FENCED_PRODUCER, fenced-producer, 409",
            "UNKNOWN_MEMBER, unknown-member, 404",
            "UNKNOWN_GROUP, unknown-group, 404",
            "UNKNOWN_KEY, unknown-key, 404",
            "FENCED_MEMBER, fenced-member, 409",
            "FENCED_INSTANCE, fenced-member, 409",
            "UNRELEASED_INSTANCE, fenced-member, 409",
            "GROUP_NOT_EMPTY, group-not-empty, 409",
            "GROUP_PROTOCOL_MISMATCH, group-protocol-mismatch, 409",
            "REQUEST_TOO_LARGE, request-too-large, 413",
            "RECORD_TOO_LARGE, record-too-large, 413",
            "OFFSET_OUT_OF_RANGE, offset-out-of-range, 416",
            "CORRUPT_RECORD, corrupt-record, 500",
            "INTERNAL, internal-error, 500",
            "COLD_TIER_UNAVAILABLE, cold-tier-unavailable, 503",
            "HOT_TIER_FULL, hot-tier-full, 503",
            "SERVICE_STOPPING, service-stopping, 503",
            "QUOTA_EXCEEDED, quota-exceeded, 429"
    })
    void everyErrorKindIsAnsweredWithItsContractSlugAndStatus(ErrorType kind, String slug, int status) {
        ProblemType type = ProblemType.of(kind);
        assertThat(type.slug()).isEqualTo(slug);
        assertThat(type.status()).isEqualTo(status);
    }

    /** The edge-only problem types (ProblemException), which no engine kind maps to. */
    @ParameterizedTest
    @CsvSource({
            "METHOD_NOT_ALLOWED, method-not-allowed, 405",
            "UNSUPPORTED_MEDIA_TYPE, unsupported-media-type, 415"
    })
    void edgeOnlyTypesKeepTheirContractSlugAndStatus(ProblemType type, String slug, int status) {
        assertThat(type.slug()).isEqualTo(slug);
        assertThat(type.status()).isEqualTo(status);
        assertThat(ErrorType.values()).extracting(ProblemType::of).doesNotContain(type);
    }

    /** Static-member kinds are raised by the Kafka listener only (HTTP members have no instance id). */
    @ParameterizedTest
    @EnumSource(value = ErrorType.class, mode = EnumSource.Mode.EXCLUDE, names = {"FENCED_INSTANCE", "UNRELEASED_INSTANCE"})
    void eachKindHasItsOwnProblemType(ErrorType kind) {
        assertThat(ProblemType.of(kind).name()).isEqualTo(kind.name());
    }
}
