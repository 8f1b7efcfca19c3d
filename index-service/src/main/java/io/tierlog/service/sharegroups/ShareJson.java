package io.tierlog.service.sharegroups;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.service.http.Requests;
import io.tierlog.sharegroups.Ack;
import io.tierlog.sharegroups.AckResult;
import io.tierlog.sharegroups.AckType;
import io.tierlog.sharegroups.ShareDescription;
import io.tierlog.sharegroups.ShareGroupConfig;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The share-group request parsing and answer rendering of api.md, "Share groups". Stateless and thread-safe. */
final class ShareJson {
    private static final JsonFactory FACTORY = new JsonFactory();
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Set<String> ACKS_FIELDS = Set.of("acks");
    private static final Set<String> ACK_FIELDS = Set.of("lease", "type", "firstOffset", "lastOffset");

    private ShareJson() {
    }

    /** An optional integer field within {@code [min, max]}. */
    static long optionalLong(JsonNode req, String name, long dflt, long min, long max) {
        JsonNode n = req.get(name);
        if (n == null || n.isNull()) {
            return dflt;
        }
        long v = Requests.asLong(n, name);
        if (v < min || v > max) {
            throw Requests.bad(name, name + " must be in [" + min + ", " + max + "]: " + v);
        }
        return v;
    }

    /**
     * The acks of a request body. The usual body ({@code {"acks": [{"lease": "...", "type": "accept"}, ...]}}, each
     * field once, maybe with integer {@code firstOffset} / {@code lastOffset}) is read in one streaming pass (a tree
     * of hundreds of acks showed in profiles); any other body is
     * read again as a tree by {@link #acksFromTree}, which names what is wrong exactly as before.
     */
    static List<Ack> acks(byte[] body) {
        List<Ack> fast = body == null ? null : acksStreaming(body);
        return fast != null ? fast : acksFromTree(body);
    }

    /** The acks of the usual body shape, or null for anything else (including any error: the tree reading reports it). */
    static List<Ack> acksStreaming(byte[] body) {
        try (JsonParser p = Requests.JSON.getFactory().createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT || p.nextToken() != JsonToken.FIELD_NAME
                    || !"acks".equals(p.currentName()) || p.nextToken() != JsonToken.START_ARRAY) {
                return null;
            }
            List<Ack> out = new ArrayList<>();
            for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
                if (t != JsonToken.START_OBJECT) {
                    return null;
                }
                String lease = null;
                AckType type = null;
                Long first = null;
                Long last = null;
                for (JsonToken f = p.nextToken(); f != JsonToken.END_OBJECT; f = p.nextToken()) {
                    if (f != JsonToken.FIELD_NAME) {
                        return null;
                    }
                    String name = p.currentName();
                    JsonToken value = p.nextToken();
                    if (value == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
                        if ("firstOffset".equals(name) && first == null) {
                            first = p.getLongValue();
                        } else if ("lastOffset".equals(name) && last == null) {
                            last = p.getLongValue();
                        } else {
                            return null;
                        }
                        continue;
                    }
                    if (value != JsonToken.VALUE_STRING) {
                        return null;
                    }
                    if ("lease".equals(name) && lease == null) {
                        lease = p.getText();
                    } else if ("type".equals(name) && type == null) {
                        type = AckType.parse(p.getText());
                        if (type == null) {
                            return null;
                        }
                    } else {
                        return null;
                    }
                }
                if (lease == null || type == null) {
                    return null;
                }
                out.add(new Ack(lease, type, first, last));
            }
            if (p.nextToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                return null;
            }
            return out;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    static List<Ack> acksFromTree(byte[] body) {
        ObjectNode req = Requests.object(body, ACKS_FIELDS);
        JsonNode arr = req.get("acks");
        if (arr == null || !arr.isArray()) {
            throw Requests.bad("acks", "acks must be an array");
        }
        List<Ack> out = new ArrayList<>();
        for (int i = 0; i < arr.size(); i++) {
            String path = "acks[" + i + "]";
            JsonNode e = arr.get(i);
            if (!e.isObject()) {
                throw Requests.bad(path, path + " must be an object");
            }
            e.fieldNames().forEachRemaining(n -> {
                if (!ACK_FIELDS.contains(n)) {
                    throw Requests.bad(path + "." + n, "unknown field '" + path + "." + n + "'");
                }
            });
            String lease = Requests.requiredText(e, "lease", path + ".lease");
            String typeText = Requests.requiredText(e, "type", path + ".type");
            AckType type = AckType.parse(typeText);
            if (type == null) {
                throw Requests.bad(path + ".type", path + ".type must be accept, release, reject or renew: " + typeText);
            }
            out.add(new Ack(lease, type, optionalOffset(e, "firstOffset", path), optionalOffset(e, "lastOffset", path)));
        }
        return out;
    }

    /** An ack's narrowing offset ({@code firstOffset}, {@code lastOffset}): absent or null is none. */
    private static Long optionalOffset(JsonNode ack, String name, String path) {
        JsonNode n = ack.get(name);
        return n == null || n.isNull() ? null : Requests.asLong(n, path + "." + name);
    }

    static ShareGroupConfig config(byte[] body) {
        ObjectNode req = Requests.object(body, null);
        @SuppressWarnings("unchecked")
        Map<String, Object> m = MAPPER.convertValue(req, Map.class);
        return ShareGroupConfig.parse(m);
    }

    /**
     * {@code {"results": [...]}}, written as bytes (an answer of hundreds of acks builds no node per ack). Lease strings
     * and errors of printable ASCII without quote or backslash (every lease this service hands out: base64url) are
     * copied into one exactly sized array, the generator's output byte for byte; any other text goes through the
     * generator, which escapes it. The generator was a third of an acks request's samples in the share benchmark.
     */
    static byte[] results(List<AckResult> results) {
        byte[] plain = plainResults(results);
        return plain != null ? plain : resultsByGenerator(results);
    }

    private static final byte[] RESULTS_START = "{\"results\":[".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LEASE_START = "{\"lease\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OK_END = "\",\"ok\":true}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] REFUSED = "\",\"ok\":false,\"error\":\"".getBytes(StandardCharsets.US_ASCII);

    /** The answer for texts that need no escaping and results with no offsets to echo, or null otherwise. */
    static byte[] plainResults(List<AckResult> results) {
        int size = RESULTS_START.length + 2;
        for (AckResult r : results) {
            if (!plain(r.lease()) || !r.ok() && !plain(r.error()) || r.firstOffset() != null || r.lastOffset() != null) {
                return null;
            }
            size += 1 + LEASE_START.length + r.lease().length()
                    + (r.ok() ? OK_END.length : REFUSED.length + r.error().length() + 2);
        }
        byte[] out = new byte[size - (results.isEmpty() ? 0 : 1)];
        int n = put(RESULTS_START, out, 0);
        for (int i = 0; i < results.size(); i++) {
            AckResult r = results.get(i);
            if (i > 0) {
                out[n++] = ',';
            }
            n = put(LEASE_START, out, n);
            n = ascii(r.lease(), out, n);
            if (r.ok()) {
                n = put(OK_END, out, n);
            } else {
                n = put(REFUSED, out, n);
                n = ascii(r.error(), out, n);
                out[n++] = '"';
                out[n++] = '}';
            }
        }
        out[n++] = ']';
        out[n++] = '}';
        return out;
    }

    /** Printable ASCII other than quote and backslash: written as it is by a JSON generator. */
    private static boolean plain(String s) {
        if (s == null) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
                return false;
            }
        }
        return true;
    }

    private static int put(byte[] bytes, byte[] out, int at) {
        System.arraycopy(bytes, 0, out, at, bytes.length);
        return at + bytes.length;
    }

    private static int ascii(String s, byte[] out, int at) {
        for (int i = 0; i < s.length(); i++) {
            out[at++] = (byte) s.charAt(i);
        }
        return at;
    }

    static byte[] resultsByGenerator(List<AckResult> results) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(32 + results.size() * 128);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeArrayFieldStart("results");
            for (AckResult r : results) {
                g.writeStartObject();
                g.writeStringField("lease", r.lease());
                if (r.firstOffset() != null) {
                    g.writeNumberField("firstOffset", r.firstOffset());
                }
                if (r.lastOffset() != null) {
                    g.writeNumberField("lastOffset", r.lastOffset());
                }
                g.writeBooleanField("ok", r.ok());
                if (!r.ok()) {
                    g.writeStringField("error", r.error());
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
        return out.toByteArray();
    }

    static ObjectNode config(String group, ShareGroupConfig config) {
        ObjectNode root = NODES.objectNode();
        root.put("group", group);
        root.set("config", MAPPER.valueToTree(config.toMap()));
        return root;
    }

    static ObjectNode description(ShareDescription d) {
        ObjectNode root = config(d.group(), d.config());
        ArrayNode topics = root.putArray("topics");
        for (ShareDescription.Topic t : d.topics()) {
            ObjectNode tn = topics.addObject().put("topic", t.topic());
            ArrayNode ps = tn.putArray("partitions");
            for (ShareDescription.Partition p : t.partitions()) {
                ps.addObject().put("partition", p.partition()).put("startOffset", p.startOffset())
                        .put("available", p.available()).put("leased", p.leased()).put("lag", p.lag());
            }
        }
        return root;
    }
}
