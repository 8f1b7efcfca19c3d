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
        if (!hasSpace(json, from, to)) {
            return Arrays.copyOfRange(json, from, to);
        }
        byte[] out = new byte[to - from];
        return Arrays.copyOf(out, copyInto(json, from, to, out, 0));
    }

    /**
     * The end (exclusive) of a JSON string starting at {@code start} that a parser has skipped, and so validated, on
     * its way to the token at {@code nextToken}: its closing quote is the last one before that token, behind nothing
     * but whitespace and a comma. The parser's skip is the one pass over the string's bytes; a scan for the closing
     * quote on top of it was a second (a quarter of a produce request's parse, in a profile of 1 KiB values). Should
     * the token's position not fit that shape, the string is scanned for its end instead.
     */
    static int stringEnd(byte[] body, int start, int nextToken) {
        return stringEnd(body, body.length, start, nextToken);
    }

    /** {@link #stringEnd(byte[], int, int)} of a body that is {@code body[0, length)} (the array may be longer). */
    static int stringEnd(byte[] body, int length, int start, int nextToken) {
        boolean atToken = nextToken > start && nextToken < length
                && (body[nextToken] == '"' || body[nextToken] == '}');
        int i = Math.min(nextToken, length) - 1;
        while (atToken && i > start && (isSpace(body[i]) || body[i] == ',')) {
            i--;
        }
        if (atToken && i > start && body[i] == '"') {
            return i + 1;
        }
        int end = start + 1;
        while (body[end] != '"') {
            end += body[end] == '\\' ? 2 : 1;
        }
        return end + 1;
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
    static boolean isSpace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }
}
