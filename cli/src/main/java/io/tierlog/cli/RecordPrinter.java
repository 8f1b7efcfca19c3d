package io.tierlog.cli;

import io.tierlog.client.ConsumerRecord;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How {@code consume} and {@code replay} print a record: {@code value} (the value's text), {@code kv} (key,
 * separator, value) or {@code json} (one object per line; a key or value that is not UTF-8 is base64 with
 * {@code keyEncoding}/{@code valueEncoding}: "base64", as the service's JSON fetch does).
 */
final class RecordPrinter {
    enum Format { value, kv, json }

    private final Format format;
    private final String separator;

    RecordPrinter(Format format, String separator) {
        this.format = format;
        this.separator = separator;
    }

    void print(PrintWriter out, ConsumerRecord r) {
        out.println(render(r));
    }

    String render(ConsumerRecord r) {
        return switch (format) {
            case value -> r.value() == null ? "null" : text(r.value());
            case kv -> (r.key() == null ? "" : text(r.key())) + separator + (r.value() == null ? "null" : text(r.value()));
            case json -> json(r);
        };
    }

    private static String json(ConsumerRecord r) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("topic", r.topic());
        o.put("partition", r.partition());
        o.put("offset", r.offset());
        o.put("timestamp", r.timestamp());
        put(o, "key", r.key());
        put(o, "value", r.value());
        Map<String, String> headers = new LinkedHashMap<>();
        boolean b64 = r.headers().values().stream().anyMatch(v -> v != null && utf8(v) == null);
        r.headers().forEach((k, v) -> headers.put(k, v == null ? null : b64 ? Base64.getEncoder().encodeToString(v) : utf8(v)));
        o.put("headers", headers);
        if (b64) {
            o.put("headersEncoding", "base64");
        }
        return Json.write(o);
    }

    private static void put(Map<String, Object> o, String name, byte[] bytes) {
        String text = bytes == null ? null : utf8(bytes);
        if (bytes != null && text == null) {
            o.put(name, Base64.getEncoder().encodeToString(bytes));
            o.put(name + "Encoding", "base64");
        } else {
            o.put(name, text);
        }
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** The bytes as a string if they are valid UTF-8, else null. */
    static String utf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
