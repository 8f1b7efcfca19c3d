package io.tierlog.log;

/**
 * The kinds of failure the engine and its edges name, raised through {@link TierlogException}. A kind says what
 * went wrong, not how a protocol answers it: the HTTP edges map each to its docs/api.md problem type (slug,
 * status) in the http-contract module ({@code io.tierlog.http.ProblemType}), the Kafka listener to a Kafka error
 * code. Kinds an edge raises for reasons of its own (authentication, quotas, stopping) are here too, so that every
 * edge reports them one way; purely HTTP ones (a method a path does not allow, an unsupported media type) are not:
 * they are the http-contract module's {@code ProblemType}s, raised as its {@code ProblemException}.
 */
public enum ErrorType {
    BAD_REQUEST,
    INVALID_TOPIC,
    INVALID_GROUP,
    INVALID_CONFIG,
    UNAUTHORIZED,
    FORBIDDEN,
    TOO_MANY_FAILURES,
    UNKNOWN_TOPIC,
    UNKNOWN_PARTITION,
    NOT_FOUND,
    TOPIC_EXISTS,
    OUT_OF_ORDER_SEQUENCE,
    FENCED_PRODUCER,
    /** A producer's batch does not fit its transaction state on the partition: not transactional while its transaction is open. */
    INVALID_TXN_STATE,
    UNKNOWN_MEMBER,
    UNKNOWN_GROUP,
    /** No record with that key, or its latest record is a tombstone (GET /v1/topics/{t}/keys/{key}). */
    UNKNOWN_KEY,
    FENCED_MEMBER,
    /** A static member's instance id was taken over by another member (a newer process under the same name). */
    FENCED_INSTANCE,
    /** A join named a static member's instance id that a live member still holds. */
    UNRELEASED_INSTANCE,
    GROUP_NOT_EMPTY,
    /** The group's members assign among themselves (Kafka's classic protocol) and the service cannot assign in it, or the reverse. */
    GROUP_PROTOCOL_MISMATCH,
    REQUEST_TOO_LARGE,
    RECORD_TOO_LARGE,
    OFFSET_OUT_OF_RANGE,
    CORRUPT_RECORD,
    INTERNAL,
    COLD_TIER_UNAVAILABLE,
    /** Produce refused while the hot volume is too full or the upload backlog too long; nothing appended. */
    HOT_TIER_FULL,
    /** The service is stopping (SIGTERM): a request arriving now is refused, untouched; retry on another node. */
    SERVICE_STOPPING,
    /** A principal over its produce or fetch byte-rate quota; nothing appended or returned. */
    QUOTA_EXCEEDED;
}
