package io.tierlog.http;

/**
 * UTF-8 encoding of a parser's character buffer straight into a byte array, byte for byte what
 * {@code String.getBytes(UTF_8)} gives for the same characters (a lone surrogate, which a JSON escape such as
 * {@code "\ud800"} can produce, becomes {@code '?'}), without the String.
 */
final class Utf8 {
    private Utf8() {
    }

    /** The encoded length of {@code chars[off, off + len)}. */
    static int length(char[] chars, int off, int len) {
        int n = 0;
        int end = off + len;
        for (int i = off; i < end; i++) {
            char c = chars[i];
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < end && Character.isLowSurrogate(chars[i + 1])) {
                n += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                n++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    /** Encodes {@code chars[off, off + len)} at {@code out[at]} (room for 3 bytes per char); returns the end. */
    static int put(char[] chars, int off, int len, byte[] out, int at) {
        int end = off + len;
        for (int i = off; i < end; i++) {
            char c = chars[i];
            if (c < 0x80) {
                out[at++] = (byte) c;
            } else if (c < 0x800) {
                out[at++] = (byte) (0xc0 | (c >> 6));
                out[at++] = (byte) (0x80 | (c & 0x3f));
            } else if (Character.isHighSurrogate(c) && i + 1 < end && Character.isLowSurrogate(chars[i + 1])) {
                int cp = Character.toCodePoint(c, chars[++i]);
                out[at++] = (byte) (0xf0 | (cp >> 18));
                out[at++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
                out[at++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
                out[at++] = (byte) (0x80 | (cp & 0x3f));
            } else if (Character.isSurrogate(c)) {
                out[at++] = '?';
            } else {
                out[at++] = (byte) (0xe0 | (c >> 12));
                out[at++] = (byte) (0x80 | ((c >> 6) & 0x3f));
                out[at++] = (byte) (0x80 | (c & 0x3f));
            }
        }
        return at;
    }
}
