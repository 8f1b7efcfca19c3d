package io.tierlog.service.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.http.JsonLimits;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.http.QueryParams;

import java.io.IOException;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * Parses request bodies and query parameters into values, or a 400 {@code bad-request} that names the
 * offending field (api.md). Bodies are read as bytes and parsed here rather than bound by JAX-RS, so that every
 * error names its field the same way and a client that forgets {@code Content-Type} is still understood.
 */
public final class Requests {
    public static final ObjectMapper JSON = new ObjectMapper(
            JsonFactory.builder().streamReadConstraints(JsonLimits.READ).build())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    private Requests() {
    }

    /** The body as a JSON object whose fields are all in {@code known}. */
    public static ObjectNode object(byte[] body, Set<String> known) {
        JsonNode root;
        try {
            root = body == null || body.length == 0 ? null : JSON.readTree(body);
        } catch (StreamConstraintsException e) {
            throw bad("body", JsonLimits.TOO_DEEP);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation(); // absent from constraint errors
            throw bad("body", "body is not valid JSON: " + e.getOriginalMessage()
                    + (at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr()));
        } catch (IOException e) {
            throw bad("body", "body could not be read: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw bad("body", "body must be a JSON object");
        }
        if (known != null) {
            Iterator<String> names = root.fieldNames();
            while (names.hasNext()) {
                String n = names.next();
                if (!known.contains(n)) {
                    throw bad(n, "unknown field '" + n + "'; expected " + String.join(", ", known.stream().sorted().toList()));
                }
            }
        }
        return (ObjectNode) root;
    }

    public static String requiredText(JsonNode parent, String name, String path) {
        JsonNode n = parent.get(name);
        if (n == null || n.isNull()) {
            throw bad(path, path + " is required");
        }
        if (!n.isTextual()) {
            throw bad(path, path + " must be a string");
        }
        return n.asText();
    }

    public static long requiredLong(JsonNode parent, String name, String path) {
        JsonNode n = parent.get(name);
        if (n == null || n.isNull()) {
            throw bad(path, path + " is required");
        }
        return asLong(n, path);
    }

    public static long asLong(JsonNode n, String path) {
        if (!n.isIntegralNumber() || !n.canConvertToLong()) {
            throw bad(path, path + " must be an integer");
        }
        return n.asLong();
    }

    /** 400 {@code bad-request} naming {@code field} ({@link QueryParams#bad}). */
    public static TierlogException bad(String field, String detail) {
        return QueryParams.bad(field, detail);
    }

    public static String shorten(String s) {
        return QueryParams.shorten(s);
    }
}
