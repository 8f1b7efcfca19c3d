package io.tierlog.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Renders the RFC 7807 problem documents of docs/api.md, one way for every adapter (the Lambda handler and the
 * index-service's exception mapper), so that a client sees byte-identical errors whichever front answered:
 * {@code {"type": <slug>, "title", "status", "detail", ...extra}} in that member order, compact JSON, UTF-8,
 * served as {@value #MEDIA_TYPE}.
 *
 * <p>Extra members never replace the four standard ones (a colliding key is dropped). Extra values are rendered
 * by Jackson's default mapping (numbers, strings, booleans, lists, maps). Stateless and thread-safe.
 */
public final class ProblemJson {
    public static final String MEDIA_TYPE = MediaTypes.PROBLEM_JSON;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> STANDARD = Set.of("type", "title", "status", "detail");

    private ProblemJson() {
    }

    /** The problem document for a contract error. */
    public static byte[] render(TierlogException e) {
        return render(e.type(), e.getMessage(), e.extra());
    }

    /** The problem document for the error kind {@code kind} ({@link ProblemType#of}). */
    public static byte[] render(ErrorType kind, String detail, Map<String, ?> extra) {
        return render(ProblemType.of(kind), detail, extra);
    }

    /** The problem document for {@code type} with a human-readable {@code detail} and extra members. */
    public static byte[] render(ProblemType type, String detail, Map<String, ?> extra) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("type", type.slug());
        doc.put("title", type.title());
        doc.put("status", type.status());
        // A 5xx says what failed, not where: whatever raised it, no file path reaches the client.
        doc.put("detail", type.isServerError() ? ServerErrorDetail.withoutPaths(detail) : detail);
        extra.forEach((k, v) -> {
            if (!STANDARD.contains(k)) {
                doc.put(k, v);
            }
        });
        try {
            return JSON.writeValueAsBytes(doc);
        } catch (JsonProcessingException e) {
            // Only an extra value Jackson cannot map gets here; the client still gets the standard members.
            return ("{\"type\":\"" + type.slug() + "\",\"title\":\"" + type.title() + "\",\"status\":" + type.status()
                    + "}").getBytes(StandardCharsets.UTF_8);
        }
    }
}
