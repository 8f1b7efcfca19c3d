package io.tierlog.ingest.function;

import io.tierlog.http.MediaTypes;
import io.tierlog.http.ProblemException;
import io.tierlog.http.ProblemType;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * Turns an event's body into the raw request bytes, enforcing {@code max.request.bytes} before any copy or
 * decoding: API Gateway hands the body over as a string, base64-encoded when {@code isBase64Encoded}, and a
 * request over the limit must cost neither the decode nor the allocation. Also tells the two request formats
 * apart by media type. Stateless and thread-safe.
 */
final class RequestBodies {
    /** The binary produce format: Kafka RecordBatch v2 batches, as the index-service accepts them. */
    static final String RECORD_BATCHES = MediaTypes.RECORD_BATCHES;

    /** The two bodies a produce request may carry. */
    enum Format {
        /** docs/api.md's JSON produce body (also when Content-Type is absent). */
        JSON,
        /** {@value RequestBodies#RECORD_BATCHES}: whole Kafka batches for one partition. */
        RECORD_BATCHES
    }

    private final int maxRequestBytes;

    RequestBodies(int maxRequestBytes) {
        this.maxRequestBytes = maxRequestBytes;
    }

    /**
     * The body format named by Content-Type (header names compared case-insensitively; API Gateway lowercases
     * them, direct invocations may not): JSON ({@code application/json} or any {@code +json} type) is
     * {@link Format#JSON}, as the index-service's {@code @Consumes(application/json)} answers;
     * {@value #RECORD_BATCHES} (any case, parameters ignored) is {@link Format#RECORD_BATCHES}; anything else is
     * 415 {@code unsupported-media-type} naming {@code Content-Type}.
     */
    Format formatOf(Map<String, String> headers) {
        String contentType = header(headers, "content-type");
        if (contentType == null) {
            // a body without a type is what a browser may post cross-origin unasked (docs/security.md)
            throw new ProblemException(ProblemType.UNSUPPORTED_MEDIA_TYPE, "Content-Type is required: application/json or "
                    + RECORD_BATCHES, Map.of("field", "Content-Type"));
        }
        if (MediaTypes.isJson(contentType)) {
            return Format.JSON;
        }
        if (RECORD_BATCHES.equals(MediaTypes.essence(contentType))) {
            return Format.RECORD_BATCHES;
        }
        throw new ProblemException(ProblemType.UNSUPPORTED_MEDIA_TYPE, "Content-Type '" + contentType
                + "' is not supported; send application/json or " + RECORD_BATCHES, Map.of("field", "Content-Type"));
    }

    /** The request bytes; 413 {@code request-too-large} or 400 {@code bad-request} (field {@code body}). */
    byte[] decode(APIGatewayV2HTTPEvent event) {
        String body = event.getBody();
        if (body == null) {
            return new byte[0];
        }
        if (event.getIsBase64Encoded()) {
            return decodeBase64(body);
        }
        // Every char is at least one UTF-8 byte, so a string longer than the limit is over it without encoding.
        if (body.length() > maxRequestBytes) {
            throw tooLarge(body.length());
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > maxRequestBytes) {
            throw tooLarge(bytes.length);
        }
        return bytes;
    }

    /**
     * The bytes of a {@value #RECORD_BATCHES} body: decoded from base64, which is how API Gateway hands over a
     * body whose media type is not text; 413 {@code request-too-large} before decoding when over the limit; 400
     * {@code bad-request} (field {@code body}) for invalid base64. An absent or empty body is zero bytes (left to
     * the batch validator to refuse). A non-empty body not marked {@code isBase64Encoded} is refused (400, field
     * {@code body}) rather than taken as its UTF-8 bytes: it reached us as text, so whatever produced it decoded
     * the client's bytes somehow, and a Kafka batch is rarely valid UTF-8 (its CRC, lengths and varints take any
     * byte value), so the bytes it stood for cannot be known. Taking its UTF-8 encoding would leave the batch
     * checks (CRC32C, lengths) to catch the damage by chance; refusing is the answer that does not depend on it.
     */
    ByteBuffer decodeBinary(APIGatewayV2HTTPEvent event) {
        String body = event.getBody();
        if (body == null || body.isEmpty()) {
            return ByteBuffer.allocate(0);
        }
        if (!event.getIsBase64Encoded()) {
            throw new TierlogException(ErrorType.BAD_REQUEST, "body: a " + RECORD_BATCHES + " body must arrive "
                    + "base64-encoded (isBase64Encoded true), as API Gateway sends binary media types; a text body "
                    + "cannot be turned back into the client's bytes", Map.of("field", "body"));
        }
        return ByteBuffer.wrap(decodeBase64(body));
    }

    private byte[] decodeBase64(String body) {
        long decodedBytes = base64DecodedLength(body);
        if (decodedBytes > maxRequestBytes) {
            throw tooLarge(decodedBytes);
        }
        try {
            return Base64.getDecoder().decode(body);
        } catch (IllegalArgumentException e) {
            throw new TierlogException(ErrorType.BAD_REQUEST, "body is marked isBase64Encoded but is not valid base64: "
                    + e.getMessage(), Map.of("field", "body"));
        }
    }

    /** Exact for well-formed padded base64; malformed input is rejected by the decoder afterwards. */
    static long base64DecodedLength(String base64) {
        int len = base64.length();
        int padding = 0;
        if (len > 0 && base64.charAt(len - 1) == '=') {
            padding++;
            if (len > 1 && base64.charAt(len - 2) == '=') {
                padding++;
            }
        }
        return (long) len * 3 / 4 - padding;
    }

    /** Same wording and members as {@code IngestService}'s own check, so both fronts answer alike. */
    private TierlogException tooLarge(long bytes) {
        return new TierlogException(ErrorType.REQUEST_TOO_LARGE, "request body of " + bytes
                + " bytes exceeds max.request.bytes = " + maxRequestBytes, Map.of("maxRequestBytes", maxRequestBytes));
    }

    private static String header(Map<String, String> headers, String name) {
        if (headers == null) {
            return null;
        }
        for (Map.Entry<String, String> h : headers.entrySet()) {
            if (h.getKey() != null && h.getKey().equalsIgnoreCase(name)) {
                return h.getValue();
            }
        }
        return null;
    }
}
