package io.tierlog.http;

import java.util.Locale;

/** The media types of docs/api.md, named once for every edge that reads or writes them. */
public final class MediaTypes {
    /** Requests' and answers' JSON bodies. */
    public static final String JSON = "application/json";
    /** Every error answer: an RFC 7807 problem document ({@link ProblemJson}). */
    public static final String PROBLEM_JSON = "application/problem+json";
    /**
     * Kafka RecordBatch v2 batches back to back, as a Kafka producer builds them: a binary produce body, and a
     * fetch or stream answer when asked for in {@code Accept}.
     */
    public static final String RECORD_BATCHES = "application/vnd.tierlog.record-batches";

    private MediaTypes() {
    }

    /** The media type of a Content-Type or Accept entry: parameters dropped, trimmed, lower case; null stays null. */
    public static String essence(String headerValue) {
        return headerValue == null ? null : headerValue.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    }

    /** Whether a Content-Type names JSON: {@code application/json} or any {@code +json} type. */
    public static boolean isJson(String contentType) {
        String media = essence(contentType);
        return media != null && (media.equals(JSON) || media.endsWith("+json"));
    }
}
