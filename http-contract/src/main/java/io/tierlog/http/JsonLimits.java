package io.tierlog.http;

import com.fasterxml.jackson.core.StreamReadConstraints;

/**
 * Limits on the JSON request bodies the service parses, shared by every parser of them (the produce parser here,
 * the index-service's other endpoints and its framework ObjectMapper), so that all answer alike.
 */
public final class JsonLimits {
    /**
     * The deepest nesting of objects and arrays a request body may have; deeper is malformed JSON, a
     * {@code bad-request}. Below Jackson's own default of 1,000, so that the limit, not a parser's internals,
     * decides, and far above any real event.
     */
    public static final int MAX_NESTING_DEPTH = 500;

    /** Jackson's read constraints with {@link #MAX_NESTING_DEPTH}. */
    public static final StreamReadConstraints READ = StreamReadConstraints.builder()
            .maxNestingDepth(MAX_NESTING_DEPTH).build();

    /** The detail of a {@code bad-request} for a body nested too deeply. */
    public static final String TOO_DEEP = "body is not valid JSON: it nests deeper than the limit of "
            + MAX_NESTING_DEPTH + " levels";

    private JsonLimits() {
    }
}
