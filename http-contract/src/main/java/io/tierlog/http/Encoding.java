package io.tierlog.http;

import io.tierlog.log.TierlogException;

import java.util.Locale;
import java.util.Map;

/**
 * How keys, values and header values travel in JSON (docs/api.md): {@code json} — values are any JSON and are
 * stored as their compact JSON text, keys and header values are strings stored as UTF-8; {@code base64} — all three
 * are base64 strings of raw bytes.
 */
public enum Encoding {
    JSON, BASE64;

    public static Encoding parse(String value, String field) {
        if (value == null) {
            return JSON;
        }
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "json" -> JSON;
            case "base64" -> BASE64;
            default -> throw new TierlogException(io.tierlog.log.ErrorType.BAD_REQUEST,
                    field + " must be 'json' or 'base64', not '" + value + "'", Map.of("field", field));
        };
    }
}
