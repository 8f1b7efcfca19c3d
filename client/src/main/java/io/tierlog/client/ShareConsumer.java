package io.tierlog.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A worker of a share group on one topic (docs/api.md, "Share groups"): leases records (each to one worker at a
 * time), then acknowledges each one: {@link Ack#ACCEPT} (done), {@link Ack#RELEASE} (deliver again, possibly to
 * another worker), {@link Ack#REJECT} (never again; to the dead-letter topic if one is set) or {@link Ack#RENEW}
 * (extend the lease). A record not acknowledged before its lease runs out is delivered again. Delivery is
 * at-least-once: an accept that fails (lease expired) means the record may be processed again elsewhere. A whole
 * leased batch can be acknowledged at once by its range leases ({@link #leaseBatch}, {@link #acknowledgeAll}).
 *
 * <p>Stateless apart from its names: thread-safe, and any number of instances may work on one group.
 */
public final class ShareConsumer {
    public enum Ack { ACCEPT, RELEASE, REJECT, RENEW }

    private final HttpTransport http;
    private final String group;
    private final String topic;

    ShareConsumer(HttpTransport http, String group, String topic) {
        this.http = http;
        this.group = group;
        this.topic = topic;
    }

    /** Up to {@code maxRecords} records leased for {@code lease}; waits up to {@code wait} while none is available. */
    public List<SharedRecord> lease(int maxRecords, Duration lease, Duration wait) {
        return leaseBatch(maxRecords, lease, wait).records();
    }

    /**
     * {@link #lease}, with the records also as runs under range leases, so that the whole batch can be acknowledged
     * with one entry per run ({@link #acknowledgeAll}) instead of one per record.
     */
    public SharedBatch leaseBatch(int maxRecords, Duration lease, Duration wait) {
        ObjectNode body = HttpTransport.JSON.createObjectNode().put("maxRecords", maxRecords)
                .put("leaseMs", lease.toMillis()).put("waitMs", wait.toMillis());
        JsonNode a = http.call("POST", base() + "/lease", body, false);
        List<SharedRecord> out = new ArrayList<>();
        for (JsonNode r : a.path("records")) {
            out.add(new SharedRecord(r.path("lease").asText(), topic, r.path("partition").asInt(),
                    r.path("offset").asLong(), r.path("deliveryCount").asInt(), r.path("timestamp").asLong(),
                    key(r), value(r), headers(r)));
        }
        List<SharedRange> ranges = new ArrayList<>();
        for (JsonNode r : a.path("ranges")) {
            ranges.add(new SharedRange(r.path("lease").asText(), r.path("partition").asInt(),
                    r.path("firstOffset").asLong(), r.path("lastOffset").asLong(), r.path("deliveryCount").asInt()));
        }
        return new SharedBatch(out, ranges);
    }

    /**
     * Acknowledges every record of {@code batch} the same way, in one request of one entry per range. A range takes
     * effect for all of its records or for none (when any of them is no longer leased under it: its lease ran out,
     * or one of its records was acknowledged on its own). Returns the ranges that did not take effect (their records
     * are unchanged); empty when every record was acknowledged.
     */
    public List<SharedRange> acknowledgeAll(SharedBatch batch, Ack type) {
        if (batch.ranges().isEmpty()) {
            return List.of();
        }
        ObjectNode body = HttpTransport.JSON.createObjectNode();
        ArrayNode list = body.putArray("acks");
        for (SharedRange r : batch.ranges()) {
            list.addObject().put("lease", r.lease()).put("type", type.name().toLowerCase());
        }
        JsonNode results = http.call("POST", base() + "/acks", body, true).path("results");
        List<SharedRange> refused = new ArrayList<>();
        for (int i = 0; i < batch.ranges().size(); i++) {
            if (!results.path(i).path("ok").asBoolean()) {
                refused.add(batch.ranges().get(i));
            }
        }
        return refused;
    }

    /**
     * Acknowledges the records {@code firstOffset} to {@code lastOffset} of {@code range} (both inside it), all or
     * none; true if it took effect.
     *
     * @throws ProblemException 400 when the offsets are not inside the range
     */
    public boolean acknowledgeRange(SharedRange range, long firstOffset, long lastOffset, Ack type) {
        ObjectNode body = HttpTransport.JSON.createObjectNode();
        body.putArray("acks").addObject().put("lease", range.lease()).put("type", type.name().toLowerCase())
                .put("firstOffset", firstOffset).put("lastOffset", lastOffset);
        return http.call("POST", base() + "/acks", body, true).path("results").path(0).path("ok").asBoolean();
    }

    /** One ack; true if it took effect, false if the lease had expired (nothing changed then). */
    public boolean acknowledge(SharedRecord record, Ack type) {
        return acknowledge(Map.of(record.lease(), type)).get(record.lease());
    }

    public boolean accept(SharedRecord record) {
        return acknowledge(record, Ack.ACCEPT);
    }

    public boolean release(SharedRecord record) {
        return acknowledge(record, Ack.RELEASE);
    }

    public boolean reject(SharedRecord record) {
        return acknowledge(record, Ack.REJECT);
    }

    public boolean renew(SharedRecord record) {
        return acknowledge(record, Ack.RENEW);
    }

    /** Acks in one request, in map order; answers per lease whether it took effect. */
    public Map<String, Boolean> acknowledge(Map<String, Ack> acks) {
        ObjectNode body = HttpTransport.JSON.createObjectNode();
        ArrayNode list = body.putArray("acks");
        acks.forEach((lease, type) -> list.addObject().put("lease", lease).put("type", type.name().toLowerCase()));
        // Acks are safe to repeat: a second accept of the same lease changes nothing.
        JsonNode a = http.call("POST", base() + "/acks", body, true);
        Map<String, Boolean> out = new LinkedHashMap<>();
        for (JsonNode r : a.path("results")) {
            out.put(r.path("lease").asText(), r.path("ok").asBoolean());
        }
        return out;
    }

    private String base() {
        return "/v1/share-groups/" + Admin.path(group) + "/topics/" + Admin.path(topic);
    }

    // The JSON rendering (docs/api.md, "Fetch"): text unless the record says base64 for that part.

    static byte[] key(JsonNode r) {
        JsonNode k = r.path("key");
        if (k.isNull() || k.isMissingNode()) {
            return null;
        }
        return "base64".equals(r.path("keyEncoding").asText()) ? Base64.getDecoder().decode(k.asText())
                : k.asText().getBytes(StandardCharsets.UTF_8);
    }

    static byte[] value(JsonNode r) {
        JsonNode v = r.path("value");
        if (v.isNull() || v.isMissingNode()) {
            return null;
        }
        if ("base64".equals(r.path("valueEncoding").asText())) {
            return Base64.getDecoder().decode(v.asText());
        }
        try {
            return HttpTransport.JSON.writeValueAsBytes(v); // the value's JSON text, compact
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static Map<String, byte[]> headers(JsonNode r) {
        boolean b64 = "base64".equals(r.path("headersEncoding").asText());
        Map<String, byte[]> out = new LinkedHashMap<>();
        r.path("headers").fields().forEachRemaining(h -> out.put(h.getKey(), h.getValue().isNull() ? null
                : b64 ? Base64.getDecoder().decode(h.getValue().asText())
                : h.getValue().asText().getBytes(StandardCharsets.UTF_8)));
        return out;
    }
}
