package io.tierlog.log;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A failure that the public contract names: it carries the {@link ErrorType} (slug and status), a
 * human-readable detail that names the offending field or value, and any extra problem+json members
 * (for example {@code logStartOffset} and {@code highWatermark} on {@code offset-out-of-range}).
 */
public class TierlogException extends RuntimeException {
    private final ErrorType type;
    private final Map<String, Object> extra;

    public TierlogException(ErrorType type, String detail) {
        this(type, detail, Map.of(), null);
    }

    public TierlogException(ErrorType type, String detail, Map<String, Object> extra) {
        this(type, detail, extra, null);
    }

    public TierlogException(ErrorType type, String detail, Map<String, Object> extra, Throwable cause) {
        super(detail, cause);
        this.type = type;
        this.extra = Collections.unmodifiableMap(new LinkedHashMap<>(extra));
    }

    public ErrorType type() {
        return type;
    }

    /** Extra problem+json members, in insertion order. */
    public Map<String, Object> extra() {
        return extra;
    }

    /**
     * The extra member that tells a client when to retry ({@code 503 hot-tier-full}, {@code 429 quota-exceeded}):
     * whole seconds, also sent as the {@code Retry-After} header by every adapter.
     */
    public static final String RETRY_AFTER_SECONDS = "retryAfterSeconds";

    /** The {@value #RETRY_AFTER_SECONDS} member, if this failure carries one. */
    public java.util.OptionalLong retryAfterSeconds() {
        return extra.get(RETRY_AFTER_SECONDS) instanceof Number n ? java.util.OptionalLong.of(n.longValue())
                : java.util.OptionalLong.empty();
    }

    public static TierlogException badRequest(String detail) {
        return new TierlogException(ErrorType.BAD_REQUEST, detail);
    }
}
