package io.tierlog.service.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.util.Map;

/**
 * An RFC 7807 problem as api.md shapes it: {@code {"type": slug, "title", "status", "detail", ...extra}},
 * served as {@code application/problem+json}. The same shape the ingest function renders.
 */
public record Problem(String type, String title, int status, String detail, Map<String, Object> extra) {
    public static final String MEDIA_TYPE = "application/problem+json";
    private static final ObjectMapper JSON = new ObjectMapper();

    public static Problem of(TierlogException e) {
        ErrorType t = e.type();
        return new Problem(t.slug(), t.title(), t.status(), e.getMessage(), e.extra());
    }

    public static Problem of(ErrorType t, String detail) {
        return new Problem(t.slug(), t.title(), t.status(), detail, Map.of());
    }

    public byte[] toJson() {
        ObjectNode node = JSON.createObjectNode();
        node.put("type", type);
        node.put("title", title);
        node.put("status", status);
        node.put("detail", detail);
        extra.forEach((k, v) -> {
            if (!node.has(k)) {
                node.set(k, JSON.valueToTree(v));
            }
        });
        try {
            return JSON.writeValueAsBytes(node);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot render problem " + type, e);
        }
    }
}
