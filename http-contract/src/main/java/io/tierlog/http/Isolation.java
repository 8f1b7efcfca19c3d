package io.tierlog.http;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.util.Map;

/**
 * What a reader sees of Kafka transactions (docs/api.md, "Fetch"), Kafka's {@code isolation.level}:
 * {@code read_uncommitted} (the default) reads every data record; {@code read_committed} reads up to the last stable
 * offset and never a record of an aborted transaction.
 */
public enum Isolation {
    READ_UNCOMMITTED, READ_COMMITTED;

    public static final String FIELD = "isolation";

    /** The {@code isolation} query parameter; absent is {@code read_uncommitted}. */
    public static Isolation parse(String value) {
        if (value == null || value.equals("read_uncommitted")) {
            return READ_UNCOMMITTED;
        }
        if (value.equals("read_committed")) {
            return READ_COMMITTED;
        }
        throw new TierlogException(ErrorType.BAD_REQUEST, FIELD + " must be 'read_uncommitted' or 'read_committed', not '"
                + QueryParams.shorten(value) + "'", Map.of("field", FIELD));
    }
}
