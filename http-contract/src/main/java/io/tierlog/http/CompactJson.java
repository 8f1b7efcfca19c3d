package io.tierlog.http;

import java.util.Arrays;

/**
 * Compacts JSON text that a parser has already validated: drops the whitespace between tokens and keeps every
 * token byte for byte, so string escapes and number literals are exactly as the client wrote them. Not a
 * validator: given invalid JSON, the output is unspecified.
 */
final class CompactJson {
    private CompactJson() {
    }

    /** The compact form of the valid JSON text in {@code json[from, to)}; a plain copy when it has no whitespace. */
    static byte[] copy(byte[] json, int from, int to) {
        int firstSpace = -1;
        for (int i = from; i < to; i++) {
            if (isSpace(json[i])) {
                firstSpace = i;
                break;
            }
        }
        if (firstSpace < 0) {
            return Arrays.copyOfRange(json, from, to);
        }
        byte[] out = new byte[to - from];
        int n = 0;
        boolean inString = false;
        for (int i = from; i < to; i++) {
            byte b = json[i];
            if (inString) {
                out[n++] = b;
                if (b == '\\') {
                    out[n++] = json[++i];   // an escaped character, possibly a quote: never ends the string
                } else if (b == '"') {
                    inString = false;
                }
            } else if (!isSpace(b)) {
                out[n++] = b;
                inString = b == '"';
            }
        }
        return Arrays.copyOf(out, n);
    }

    /**
     * Writes the compact form of the valid JSON text {@code json[from, to)} into {@code out} at {@code at} (room for
     * {@code to - from} bytes needed) and returns where it ends: {@link #copy} without the array of its own.
     */
    static int copyInto(byte[] json, int from, int to, byte[] out, int at) {
        int n = at;
        boolean inString = false;
        for (int i = from; i < to; i++) {
            byte b = json[i];
            if (inString) {
                out[n++] = b;
                if (b == '\\') {
                    out[n++] = json[++i];
                } else if (b == '"') {
                    inString = false;
                }
            } else if (!isSpace(b)) {
                out[n++] = b;
                inString = b == '"';
            }
        }
        return n;
    }

    /** Whether {@code json[from, to)} holds a whitespace byte (inside a string or not): if not, it is compact. */
    static boolean hasSpace(byte[] json, int from, int to) {
        for (int i = from; i < to; i++) {
            if (isSpace(json[i])) {
                return true;
            }
        }
        return false;
    }

    /** JSON's four whitespace characters (RFC 8259 section 2); a space may also occur raw inside a string. */
    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }
}
