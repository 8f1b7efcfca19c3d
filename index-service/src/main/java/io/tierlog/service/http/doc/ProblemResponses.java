package io.tierlog.service.http.doc;

/**
 * Names of the error answers the operations share. Each is declared once, as an OpenAPI component response
 * (application/problem+json with the {@code Problem} schema) in {@code META-INF/openapi.yaml}, which Quarkus merges
 * with what the annotations describe; an operation refers to it by name, e.g.
 * {@code @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_TOPIC)}, and its own description says
 * which problem types of a status apply to it.
 */
public final class ProblemResponses {
    public static final String BAD_REQUEST = "BadRequest";
    public static final String UNKNOWN_TOPIC = "UnknownTopic";
    public static final String UNKNOWN_PARTITION = "UnknownPartition";
    public static final String TOPIC_EXISTS = "TopicExists";
    public static final String PRODUCER_CONFLICT = "ProducerConflict";
    public static final String TOO_LARGE = "TooLarge";
    public static final String OFFSET_OUT_OF_RANGE = "OffsetOutOfRange";
    public static final String INTERNAL = "InternalError";
    public static final String COLD_TIER_UNAVAILABLE = "ColdTierUnavailable";
    public static final String NOT_FOUND = "NotFound";
    public static final String UNKNOWN_GROUP = "UnknownGroup";
    public static final String UNKNOWN_KEY = "UnknownKey";
    public static final String UNKNOWN_MEMBER = "UnknownMember";
    public static final String FENCED_MEMBER = "FencedMember";
    public static final String GROUP_NOT_EMPTY = "GroupNotEmpty";
    /** Added to every /v1 operation by {@link SharedResponsesFilter}, not by annotations. */
    public static final String UNAUTHORIZED = "Unauthorized";
    public static final String FORBIDDEN = "Forbidden";
    public static final String UNSUPPORTED_MEDIA_TYPE = "UnsupportedMediaType";
    public static final String TOO_MANY_REQUESTS = "TooManyRequests";
    public static final String SERVICE_UNAVAILABLE = "ServiceUnavailable";

    private ProblemResponses() {
    }
}
