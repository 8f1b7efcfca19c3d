package io.tierlog.http;

import io.tierlog.log.ErrorType;

/**
 * The problem types of docs/api.md: each one's {@code type} slug, HTTP status and title, as every edge (the
 * index-service, the ingest function) answers them. The engine raises {@link ErrorType}s, which know nothing of
 * HTTP; {@link #of} is the one place that maps them to the wire. {@link #METHOD_NOT_ALLOWED} and
 * {@link #UNSUPPORTED_MEDIA_TYPE} have no engine kind: only an edge raises them ({@link ProblemException}). A slug or status here is part of the contract:
 * ProblemTypeTest pins every one.
 */
public enum ProblemType {
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
    INVALID_TXN_STATE("invalid-transaction-state", 409, "Invalid transaction state"),
    UNKNOWN_MEMBER("unknown-member", 404, "Unknown member"),
    UNKNOWN_GROUP("unknown-group", 404, "Unknown group"),
    UNKNOWN_KEY("unknown-key", 404, "Unknown key"),
    FENCED_MEMBER("fenced-member", 409, "Fenced member"),
    GROUP_NOT_EMPTY("group-not-empty", 409, "Group not empty"),
    GROUP_PROTOCOL_MISMATCH("group-protocol-mismatch", 409, "Group protocol mismatch"),
    REQUEST_TOO_LARGE("request-too-large", 413, "Request too large"),
    RECORD_TOO_LARGE("record-too-large", 413, "Record too large"),
    UNSUPPORTED_MEDIA_TYPE("unsupported-media-type", 415, "Unsupported media type"),
    OFFSET_OUT_OF_RANGE("offset-out-of-range", 416, "Offset out of range"),
    CORRUPT_RECORD("corrupt-record", 500, "Corrupt record"),
    INTERNAL("internal-error", 500, "Internal error"),
    COLD_TIER_UNAVAILABLE("cold-tier-unavailable", 503, "Cold tier unavailable"),
    HOT_TIER_FULL("hot-tier-full", 503, "Hot tier full"),
    SERVICE_STOPPING("service-stopping", 503, "Service stopping"),
    QUOTA_EXCEEDED("quota-exceeded", 429, "Quota exceeded");

    private final String slug;
    private final int status;
    private final String title;

    ProblemType(String slug, int status, String title) {
        this.slug = slug;
        this.status = status;
        this.title = title;
    }

    /** The problem type an error kind is answered with (a switch, so a new kind does not compile until mapped). */
    public static ProblemType of(ErrorType kind) {
        return switch (kind) {
            case BAD_REQUEST -> BAD_REQUEST;
            case INVALID_TOPIC -> INVALID_TOPIC;
            case INVALID_GROUP -> INVALID_GROUP;
            case INVALID_CONFIG -> INVALID_CONFIG;
            case UNAUTHORIZED -> UNAUTHORIZED;
            case FORBIDDEN -> FORBIDDEN;
            case TOO_MANY_FAILURES -> TOO_MANY_FAILURES;
            case UNKNOWN_TOPIC -> UNKNOWN_TOPIC;
            case UNKNOWN_PARTITION -> UNKNOWN_PARTITION;
            case NOT_FOUND -> NOT_FOUND;
            case TOPIC_EXISTS -> TOPIC_EXISTS;
            case OUT_OF_ORDER_SEQUENCE -> OUT_OF_ORDER_SEQUENCE;
            case FENCED_PRODUCER -> FENCED_PRODUCER;
            case INVALID_TXN_STATE -> INVALID_TXN_STATE;
            case UNKNOWN_MEMBER -> UNKNOWN_MEMBER;
            case UNKNOWN_GROUP -> UNKNOWN_GROUP;
            case UNKNOWN_KEY -> UNKNOWN_KEY;
            case FENCED_MEMBER, FENCED_INSTANCE, UNRELEASED_INSTANCE -> FENCED_MEMBER;
            case GROUP_NOT_EMPTY -> GROUP_NOT_EMPTY;
            case GROUP_PROTOCOL_MISMATCH -> GROUP_PROTOCOL_MISMATCH;
            case REQUEST_TOO_LARGE -> REQUEST_TOO_LARGE;
            case RECORD_TOO_LARGE -> RECORD_TOO_LARGE;
            case OFFSET_OUT_OF_RANGE -> OFFSET_OUT_OF_RANGE;
            case CORRUPT_RECORD -> CORRUPT_RECORD;
            case INTERNAL -> INTERNAL;
            case COLD_TIER_UNAVAILABLE -> COLD_TIER_UNAVAILABLE;
            case HOT_TIER_FULL -> HOT_TIER_FULL;
            case SERVICE_STOPPING -> SERVICE_STOPPING;
            case QUOTA_EXCEEDED -> QUOTA_EXCEEDED;
        };
    }

    /** The {@code type} member of the problem document. */
    public String slug() {
        return slug;
    }

    public int status() {
        return status;
    }

    public String title() {
        return title;
    }

    /** A server's failure rather than the client's: logged for a person, its detail stripped of paths. */
    public boolean isServerError() {
        return status >= 500;
    }
}
