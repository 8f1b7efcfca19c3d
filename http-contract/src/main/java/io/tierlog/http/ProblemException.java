package io.tierlog.http;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A failure only an HTTP edge raises, named by its problem type directly: a method the path does not allow
 * ({@link ProblemType#METHOD_NOT_ALLOWED}) or a body media type the endpoint does not take
 * ({@link ProblemType#UNSUPPORTED_MEDIA_TYPE}). The engine's {@link io.tierlog.log.ErrorType} has no such kinds;
 * an edge answers this exception as it answers an engine failure, through {@link ProblemJson}.
 */
public class ProblemException extends RuntimeException {
    private final ProblemType type;
    private final Map<String, Object> extra;

    public ProblemException(ProblemType type, String detail, Map<String, ?> extra) {
        super(detail);
        this.type = type;
        this.extra = Collections.unmodifiableMap(new LinkedHashMap<>(extra));
    }

    public ProblemType type() {
        return type;
    }

    /** Extra problem+json members, in insertion order. */
    public Map<String, Object> extra() {
        return extra;
    }
}
