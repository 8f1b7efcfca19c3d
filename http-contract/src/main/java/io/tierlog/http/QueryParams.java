package io.tierlog.http;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.util.Map;

/**
 * The integer query parameters of docs/api.md ({@code partition}, {@code offset}, {@code maxRecords}...), parsed
 * one way by every edge: surrounding blanks ignored, an integer within the parameter's bounds, otherwise 400
 * {@code bad-request} naming the parameter in {@code field}. Stateless.
 */
public final class QueryParams {
    private QueryParams() {
    }

    /** An optional integer parameter within {@code [min, max]}; absent or empty is {@code defaultValue}. */
    public static long integer(String raw, String name, long defaultValue, long min, long max) {
        if (raw == null || raw.isEmpty()) {
            return defaultValue;
        }
        long v;
        try {
            v = Long.parseLong(raw.trim());
        } catch (NumberFormatException e) {
            throw bad(name, name + " must be an integer, not '" + shorten(raw) + "'");
        }
        if (v < min || v > max) {
            throw bad(name, name + " must be in [" + min + ", " + max + "]: " + v);
        }
        return v;
    }

    /**
     * The {@code partition} a {@value MediaTypes#RECORD_BATCHES} produce must name: required, in
     * {@code [0, 2^31-1]}. Whether the topic has it is the ingest service's check (404 {@code unknown-partition}).
     */
    public static int producePartition(String raw) {
        if (raw == null || raw.isEmpty()) {
            throw bad("partition", "partition is required with Content-Type " + MediaTypes.RECORD_BATCHES);
        }
        return (int) integer(raw, "partition", 0, 0, Integer.MAX_VALUE);
    }

    /** A fetch's required {@code offset}: any integer (one outside the log is the read's 416 with its bounds). */
    public static long offset(String raw) {
        if (raw == null || raw.isEmpty()) {
            throw bad("offset", "offset is required");
        }
        return integer(raw, "offset", 0, Long.MIN_VALUE, Long.MAX_VALUE);
    }

    /** 400 {@code bad-request} naming {@code field}. */
    public static TierlogException bad(String field, String detail) {
        return new TierlogException(ErrorType.BAD_REQUEST, detail, Map.of("field", field));
    }

    /** A client's value as quoted back in a detail: at most 60 characters. */
    public static String shorten(String s) {
        return s.length() > 60 ? s.substring(0, 60) + "…" : s;
    }
}
