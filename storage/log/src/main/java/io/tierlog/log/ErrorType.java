package io.tierlog.log;

/**
 * The error kinds of the public contract (docs/api.md), each with its problem+json {@code type} slug and
 * HTTP status. The engine raises them through {@link TierlogException}; every adapter (the Quarkus
 * exception mapper, the Lambda handler) renders them the same way.
 */
public enum ErrorType {
    BAD_REQUEST("bad-request", 400, "Bad request"),
    INVALID_TOPIC("invalid-topic", 400, "Invalid topic name"),
    INVALID_GROUP("invalid-group", 400, "Invalid group name"),
    INVALID_CONFIG("invalid-config", 400, "Invalid topic configuration"),
    UNAUTHORIZED("unauthorized", 401, "Unauthorized"),
    FORBIDDEN("forbidden", 403, "Forbidden"),
    TOO_MANY_FAILURES("too-many-failures", 429, "Too many failed attempts"),
    UNKNOWN_TOPIC("unknown-topic", 404, "Unknown topic"),
    UNKNOWN_PARTITION("unknown-partition", 404, "Unknown partition"),
    NOT_FOUND("not-found", 404, "Not found"),
    METHOD_NOT_ALLOWED("method-not-allowed", 405, "Method not allowed"),
    TOPIC_EXISTS("topic-exists", 409, "Topic already exists"),
    OUT_OF_ORDER_SEQUENCE("out-of-order-sequence", 409, "Out of order sequence"),
    FENCED_PRODUCER("fenced-producer", 409, "Fenced producer"),
    UNKNOWN_MEMBER("unknown-member", 404, "Unknown member"),
    UNKNOWN_GROUP("unknown-group", 404, "Unknown group"),
    /** No record with that key, or its latest record is a tombstone (GET /v1/topics/{t}/keys/{key}). */
    UNKNOWN_KEY("unknown-key", 404, "Unknown key"),
    FENCED_MEMBER("fenced-member", 409, "Fenced member"),
    GROUP_NOT_EMPTY("group-not-empty", 409, "Group not empty"),
    REQUEST_TOO_LARGE("request-too-large", 413, "Request too large"),
    RECORD_TOO_LARGE("record-too-large", 413, "Record too large"),
    UNSUPPORTED_MEDIA_TYPE("unsupported-media-type", 415, "Unsupported media type"),
    OFFSET_OUT_OF_RANGE("offset-out-of-range", 416, "Offset out of range"),
    CORRUPT_RECORD("corrupt-record", 500, "Corrupt record"),
    INTERNAL("internal-error", 500, "Internal error"),
    COLD_TIER_UNAVAILABLE("cold-tier-unavailable", 503, "Cold tier unavailable"),
    /** Produce refused while the hot volume is too full or the upload backlog too long; nothing appended. */
    HOT_TIER_FULL("hot-tier-full", 503, "Hot tier full"),
    /** The service is stopping (SIGTERM): a request arriving now is refused, untouched; retry on another node. */
    SERVICE_STOPPING("service-stopping", 503, "Service stopping"),
    /** A principal over its produce or fetch byte-rate quota; nothing appended or returned. */
    QUOTA_EXCEEDED("quota-exceeded", 429, "Quota exceeded");

    private final String slug;
    private final int status;
    private final String title;

    ErrorType(String slug, int status, String title) {
        this.slug = slug;
        this.status = status;
        this.title = title;
    }

    public String slug() {
        return slug;
    }

    public int status() {
        return status;
    }

    public String title() {
        return title;
    }
}
