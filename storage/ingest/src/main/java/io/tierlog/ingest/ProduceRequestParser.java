package io.tierlog.ingest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.format.Header;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Parses a produce request body (shared/api.md). Every error is a {@code bad-request} whose detail names the
 * field by its JSON path, e.g. {@code records[3].partition must be an integer}. Unknown fields are rejected, so
 * a misspelt {@code "partiton"} is an error rather than a silently ignored option. Thread-safe.
 */
public final class ProduceRequestParser {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
    private static final Set<String> TOP_FIELDS = Set.of("records", "encoding", "producer");
    private static final Set<String> RECORD_FIELDS = Set.of("key", "value", "headers", "partition", "timestamp");
    private static final Set<String> PRODUCER_FIELDS = Set.of("id", "epoch", "sequence");

    public ProduceRequest parse(byte[] body) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (JsonProcessingException e) {
            throw bad("body", "body is not valid JSON: " + e.getOriginalMessage() + " at line "
                    + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr());
        } catch (IOException e) {
            throw bad("body", "body could not be read: " + e.getMessage());
        }
        if (root == null || root.isMissingNode() || !root.isObject()) {
            throw bad("body", "body must be a JSON object with a 'records' array");
        }
        rejectUnknown(root, TOP_FIELDS, "");
        Encoding encoding = Encoding.parse(optionalText(root, "encoding", "encoding"), "encoding");
        JsonNode records = root.get("records");
        if (records == null || !records.isArray()) {
            throw bad("records", "records must be an array");
        }
        if (records.isEmpty()) {
            throw bad("records", "records must not be empty");
        }
        List<ProduceRecord> parsed = new ArrayList<>(records.size());
        for (int i = 0; i < records.size(); i++) {
            parsed.add(record(records.get(i), "records[" + i + "]", encoding));
        }
        return new ProduceRequest(parsed, producer(root.get("producer")));
    }

    private ProduceRecord record(JsonNode node, String path, Encoding encoding) {
        if (!node.isObject()) {
            throw bad(path, path + " must be an object");
        }
        rejectUnknown(node, RECORD_FIELDS, path + ".");
        byte[] key = bytes(node.get("key"), path + ".key", encoding, false);
        byte[] value = bytes(node.get("value"), path + ".value", encoding, true);
        List<Header> headers = new ArrayList<>();
        JsonNode h = node.get("headers");
        if (h != null && !h.isNull()) {
            if (!h.isObject()) {
                throw bad(path + ".headers", path + ".headers must be an object of string values");
            }
            Iterator<Map.Entry<String, JsonNode>> fields = h.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> f = fields.next();
                headers.add(new Header(f.getKey(), bytes(f.getValue(), path + ".headers." + f.getKey(), encoding, false)));
            }
        }
        Long partition = integer(node.get("partition"), path + ".partition", 0, Integer.MAX_VALUE);
        Long timestamp = integer(node.get("timestamp"), path + ".timestamp", 0, Long.MAX_VALUE);
        return new ProduceRecord(key, value, headers, partition == null ? null : partition.intValue(), timestamp);
    }

    /** Key, value or header value: null/absent → null; else per encoding. */
    private byte[] bytes(JsonNode node, String path, Encoding encoding, boolean anyJson) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (encoding == Encoding.BASE64) {
            if (!node.isTextual()) {
                throw bad(path, path + " must be a base64 string");
            }
            try {
                return Base64.getDecoder().decode(node.asText());
            } catch (IllegalArgumentException e) {
                throw bad(path, path + " is not valid base64: " + e.getMessage());
            }
        }
        if (anyJson) {
            try {
                return JSON.writeValueAsBytes(node);
            } catch (JsonProcessingException e) {
                throw bad(path, path + " cannot be rendered as JSON");
            }
        }
        if (!node.isTextual()) {
            throw bad(path, path + " must be a string (use encoding=base64 for raw bytes)");
        }
        return node.asText().getBytes(StandardCharsets.UTF_8);
    }

    private Optional<ProducerRef> producer(JsonNode node) {
        if (node == null || node.isNull()) {
            return Optional.empty();
        }
        if (!node.isObject()) {
            throw bad("producer", "producer must be an object with id, epoch and sequence");
        }
        rejectUnknown(node, PRODUCER_FIELDS, "producer.");
        String id = optionalText(node, "id", "producer.id");
        if (id == null || id.isEmpty() || id.length() > 256) {
            throw bad("producer.id", "producer.id must be a non-empty string of at most 256 characters");
        }
        Long epoch = integer(node.get("epoch"), "producer.epoch", 0, Short.MAX_VALUE);
        Long sequence = integer(node.get("sequence"), "producer.sequence", 0, Integer.MAX_VALUE);
        if (epoch == null) {
            throw bad("producer.epoch", "producer.epoch is required");
        }
        if (sequence == null) {
            throw bad("producer.sequence", "producer.sequence is required");
        }
        return Optional.of(new ProducerRef(id, epoch.intValue(), sequence.intValue()));
    }

    private static String optionalText(JsonNode parent, String name, String path) {
        JsonNode n = parent.get(name);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isTextual()) {
            throw bad(path, path + " must be a string");
        }
        return n.asText();
    }

    private static Long integer(JsonNode node, String path, long min, long max) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isIntegralNumber() || !node.canConvertToLong()) {
            throw bad(path, path + " must be an integer");
        }
        long v = node.asLong();
        if (v < min || v > max) {
            throw bad(path, path + " must be in [" + min + ", " + max + "]: " + v);
        }
        return v;
    }

    private static void rejectUnknown(JsonNode node, Set<String> known, String prefix) {
        Iterator<String> names = node.fieldNames();
        while (names.hasNext()) {
            String n = names.next();
            if (!known.contains(n)) {
                throw bad(prefix + n, "unknown field '" + prefix + n + "'");
            }
        }
    }

    static TierlogException bad(String field, String detail) {
        return new TierlogException(ErrorType.BAD_REQUEST, detail, Map.of("field", field));
    }
}
