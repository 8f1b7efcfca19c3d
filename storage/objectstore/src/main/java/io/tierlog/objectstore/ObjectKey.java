package io.tierlog.objectstore;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The name of an object, relative to the store's root (a filesystem directory, or a bucket plus key prefix).
 *
 * <p>Keys are '/'-separated segments. To be safe on every backend a key must:
 * <ul>
 *   <li>be 1..{@value #MAX_UTF8_BYTES} UTF-8 bytes long;</li>
 *   <li>not start or end with '/', and not contain empty ("//"), "." or ".." segments — so a key can never
 *       name a location outside the store's root, and maps one-to-one onto a relative file path;</li>
 *   <li>use only S3's "safe" characters {@code [A-Za-z0-9] ! - _ . * ' ( )} plus {@code = + , ~ @} and '/'.
 *       This keeps keys portable (no URL or filesystem escaping questions) and makes Java's {@link
 *       String#compareTo} order equal to S3's UTF-8 binary order, which listing relies on.</li>
 * </ul>
 * Tierlog's own keys ({@code <topic>/<partition>/<20-digit offset>.log}, {@code .../manifest/<20-digit
 * version>.json}) all fit; topic names are {@code [A-Za-z0-9._-]}.
 *
 * @param value the key text
 */
public record ObjectKey(String value) implements Comparable<ObjectKey> {

    /** The same limit S3 puts on a whole key, prefix included. */
    public static final int MAX_UTF8_BYTES = 1024;

    public ObjectKey {
        Objects.requireNonNull(value, "value");
        if (value.isBlank()) {
            throw new IllegalArgumentException("object key must not be blank");
        }
        if (value.getBytes(StandardCharsets.UTF_8).length > MAX_UTF8_BYTES) {
            throw new IllegalArgumentException("object key longer than " + MAX_UTF8_BYTES + " bytes: " + value);
        }
        for (int i = 0; i < value.length(); i++) {
            if (!isAllowed(value.charAt(i))) {
                throw new IllegalArgumentException(
                        "object key contains character '" + value.charAt(i) + "' (index " + i + "): " + value);
            }
        }
        if (value.startsWith("/") || value.endsWith("/")) {
            throw new IllegalArgumentException("object key must not start or end with '/': " + value);
        }
        for (String segment : value.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                throw new IllegalArgumentException("object key has an empty, '.' or '..' segment: " + value);
            }
        }
    }

    /** Shorthand for {@code new ObjectKey(value)}. */
    public static ObjectKey of(String value) {
        return new ObjectKey(value);
    }

    /** This key with {@code child} appended after a '/'. */
    public ObjectKey resolve(String child) {
        return new ObjectKey(value + "/" + child);
    }

    static boolean isAllowed(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || "!-_.*'()=+,~@/".indexOf(c) >= 0;
    }

    /**
     * Checks a listing prefix: empty, or any text a key could start with (same characters, no leading '/').
     *
     * @return the prefix, for chaining
     * @throws IllegalArgumentException if no valid key could start with it
     */
    public static String requireValidPrefix(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (prefix.startsWith("/")) {
            throw new IllegalArgumentException("prefix must not start with '/': " + prefix);
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (!isAllowed(prefix.charAt(i))) {
                throw new IllegalArgumentException("prefix contains character '" + prefix.charAt(i) + "': " + prefix);
            }
        }
        return prefix;
    }

    @Override
    public int compareTo(ObjectKey other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
