package io.tierlog.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import java.util.OptionalLong;

/**
 * The service answered with an error status and an {@code application/problem+json} body (docs/api.md, "Errors"):
 * {@link #type()} is the stable slug to branch on ({@code unknown-topic}, {@code fenced-member}, ...), {@link #body()}
 * carries the extra fields ({@code field}, {@code expectedSequence}, ...).
 */
public class ProblemException extends TierlogException {
    private final int status;
    private final String type;
    private final String title;
    private final String detail;
    private final transient JsonNode body;
    private final long retryAfterSeconds;

    public ProblemException(int status, String type, String title, String detail, JsonNode body, long retryAfterSeconds) {
        super(status + " " + type + (detail == null || detail.isEmpty() ? "" : ": " + detail));
        this.status = status;
        this.type = type;
        this.title = title;
        this.detail = detail;
        this.body = body == null ? JsonNodeFactory.instance.objectNode() : body;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public int status() {
        return status;
    }

    /** The problem's {@code type} slug; {@code "http-<status>"} when the body was not a problem document. */
    public String type() {
        return type;
    }

    public String title() {
        return title;
    }

    public String detail() {
        return detail;
    }

    /** The whole problem document (an empty object when there was none). */
    public JsonNode body() {
        return body;
    }

    /** The {@code Retry-After} header in seconds, when the answer had one. */
    public OptionalLong retryAfterSeconds() {
        return retryAfterSeconds < 0 ? OptionalLong.empty() : OptionalLong.of(retryAfterSeconds);
    }

    /** Worth retrying unchanged: 429 and every 5xx (overload, shutdown, an unreachable cold tier). */
    public boolean retriable() {
        return status == 429 || status >= 500;
    }
}
