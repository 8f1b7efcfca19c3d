package io.tierlog.ingest.function;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;

/**
 * Turns an event's body into the raw request bytes, enforcing {@code max.request.bytes} before any copy or
 * decoding: API Gateway hands the body over as a string, base64-encoded when {@code isBase64Encoded}, and a
 * request over the limit must cost neither the decode nor the allocation. Also checks the media type.
 * Stateless and thread-safe.
 */
final class RequestBodies {
    private final int maxRequestBytes;

    RequestBodies(int maxRequestBytes) {
        this.maxRequestBytes = maxRequestBytes;
    }

    /**
     * 415 {@code unsupported-media-type} unless Content-Type is absent or JSON ({@code application/json} or any
     * {@code +json} type), as the index-service's {@code @Consumes(application/json)} answers.
     */
    void requireJson(Map<String, String> headers) {
        String contentType = header(headers, "content-type");
        if (contentType == null) {
            return;
        }
        String media = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
        if (!media.equals("application/json") && !media.endsWith("+json")) {
            throw new TierlogException(ErrorType.UNSUPPORTED_MEDIA_TYPE, "Content-Type '" + contentType
                    + "' is not supported; send application/json", Map.of("field", "Content-Type"));
        }
    }

    /** The request bytes; 413 {@code request-too-large} or 400 {@code bad-request} (field {@code body}). */
    byte[] decode(APIGatewayV2HTTPEvent event) {
        String body = event.getBody();
        if (body == null) {
            return new byte[0];
        }
        if (event.getIsBase64Encoded()) {
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
