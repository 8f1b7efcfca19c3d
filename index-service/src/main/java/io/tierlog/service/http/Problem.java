package io.tierlog.service.http;

import io.tierlog.http.ProblemType;
import io.tierlog.http.MediaTypes;
import io.tierlog.http.ProblemException;
import io.tierlog.http.ProblemJson;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.util.Map;

/**
 * An api.md problem ({@code {"type": slug, "title", "status", "detail", ...extra}}, served as
 * {@code application/problem+json}), rendered by the http-contract module's {@link ProblemJson} so that the service and
 * the ingest function answer byte-identical errors.
 */
public record Problem(ProblemType type, String detail, Map<String, ?> extra) {
    public static final String MEDIA_TYPE = MediaTypes.PROBLEM_JSON;

    public static Problem of(TierlogException e) {
        return new Problem(ProblemType.of(e.type()), e.getMessage(), e.extra());
    }

    public static Problem of(ProblemException e) {
        return new Problem(e.type(), e.getMessage(), e.extra());
    }

    /** The problem an engine error kind is answered with ({@link ProblemType#of}). */
    public static Problem of(ErrorType t, String detail) {
        return new Problem(ProblemType.of(t), detail, Map.of());
    }

    /** The {@code Retry-After} seconds a 429 or 503 carries ({@link TierlogException#RETRY_AFTER_SECONDS}). */
    public java.util.OptionalLong retryAfterSeconds() {
        return extra.get(TierlogException.RETRY_AFTER_SECONDS) instanceof Number n
                ? java.util.OptionalLong.of(n.longValue()) : java.util.OptionalLong.empty();
    }

    /** The docs/api.md problem type ({@link #type}). */
    public ProblemType problemType() {
        return type;
    }

    public int status() {
        return problemType().status();
    }

    public byte[] toJson() {
        return ProblemJson.render(type, detail, extra);
    }
}
