package io.tierlog.service.api;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A growable byte buffer that JSON answers are written into, token by token, with the escaping and base64 of
 * Jackson's UTF-8 generator (so the bytes are the ones {@link RecordJson} writes): in strings, {@code "} and
 * {@code \} are escaped, {@code \b \t \n \f \r} get their short escapes, other control characters
 * {@code \}{@code u00XX} (upper-case hex), and every other byte, non-ASCII included, is copied as it is; base64 is
 * the standard alphabet with padding and no line breaks.
 *
 * <p>One per thread ({@link #forThisThread}): a fetch renders into it and copies the result out once, so the
 * rendering allocates nothing per record. Not thread-safe.
 */
final class JsonOut {
    /** A buffer grown beyond this by one large answer is dropped afterwards rather than kept by its thread. */
    private static final int KEEP_LIMIT = 16 << 20;
    private static final ThreadLocal<JsonOut> PER_THREAD = ThreadLocal.withInitial(() -> new JsonOut(64 * 1024));
    private static final byte[] HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BASE64 =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".getBytes(StandardCharsets.US_ASCII);
    /** Per ASCII byte: 0 copied as is, else the short escape letter, or 'u' for the \\u00XX form. */
    private static final byte[] ESCAPES = new byte[128];

    static {
        for (int c = 0; c < 0x20; c++) {
            ESCAPES[c] = 'u';
        }
        ESCAPES['\b'] = 'b';
        ESCAPES['\t'] = 't';
        ESCAPES['\n'] = 'n';
        ESCAPES['\f'] = 'f';
        ESCAPES['\r'] = 'r';
        ESCAPES['"'] = '"';
        ESCAPES['\\'] = '\\';
    }

    byte[] buf;
    int len;

    JsonOut(int capacity) {
        buf = new byte[capacity];
    }

    /** This thread's buffer, emptied. */
    static JsonOut forThisThread() {
        JsonOut out = PER_THREAD.get();
        if (out.buf.length > KEEP_LIMIT) {
            out = new JsonOut(64 * 1024);
            PER_THREAD.set(out);
        }
        out.len = 0;
        return out;
    }

    int size() {
        return len;
    }

    byte[] toByteArray() {
        return Arrays.copyOf(buf, len);
    }

    /** Copies {@code [from, size())} into {@code into} at its position 0. */
    void copyTo(ByteBuffer into, int from) {
        into.put(0, buf, from, len - from);
    }

    void ensure(int more) {
        if (len + more > buf.length) {
            long wanted = Math.max((long) buf.length * 2, (long) len + more);
            buf = Arrays.copyOf(buf, (int) Math.min(wanted, Integer.MAX_VALUE - 16));
            if (len + more > buf.length) {
                throw new IllegalStateException("answer larger than 2 GiB");
            }
        }
    }

    void write(int b) {
        ensure(1);
        buf[len++] = (byte) b;
    }

    void write(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, buf, len, b.length);
        len += b.length;
    }

    void write(byte[] b, int from, int to) {
        int n = to - from;
        ensure(n);
        System.arraycopy(b, from, buf, len, n);
        len += n;
    }

    /** Copies {@code n} bytes of {@code src} from absolute index {@code at}. */
    void write(ByteBuffer src, int at, int n) {
        ensure(n);
        src.get(at, buf, len, n);
        len += n;
    }

    void number(long v) {
        if (v == Long.MIN_VALUE) {
            write("-9223372036854775808".getBytes(StandardCharsets.US_ASCII));
            return;
        }
        ensure(20);
        if (v < 0) {
            buf[len++] = '-';
            v = -v;
        }
        int digits = 1;
        for (long t = v; t >= 10; t /= 10) {
            digits++;
        }
        int end = len + digits;
        for (int i = end - 1; i >= len; i--) {
            buf[i] = (byte) ('0' + (v % 10));
            v /= 10;
        }
        len = end;
    }

    /** A JSON string of the UTF-8 bytes {@code b[from, to)}, quoted and escaped. */
    void string(byte[] b, int from, int to) {
        ensure(2 + (to - from));
        buf[len++] = '"';
        int i = from;
        while (i < to) {
            // Copy the run of bytes that need no escape in one go.
            int run = i;
            while (run < to && (b[run] < 0 || ESCAPES[b[run]] == 0)) {
                run++;
            }
            if (run > i) {
                write(b, i, run);
                i = run;
            }
            if (i < to) {
                byte e = ESCAPES[b[i]];
                if (e == 'u') {
                    ensure(6);
                    buf[len++] = '\\';
                    buf[len++] = 'u';
                    buf[len++] = '0';
                    buf[len++] = '0';
                    buf[len++] = HEX[b[i] >> 4];
                    buf[len++] = HEX[b[i] & 0xF];
                } else {
                    ensure(2);
                    buf[len++] = '\\';
                    buf[len++] = e;
                }
                i++;
            }
        }
        write('"');
    }

    /** A JSON string of the base64 of {@code b[from, to)}. */
    void base64(byte[] b, int from, int to) {
        int n = to - from;
        ensure(2 + (n + 2) / 3 * 4);
        byte[] o = buf;
        int p = len;
        o[p++] = '"';
        int i = from;
        for (int end = from + n / 3 * 3; i < end; i += 3) {
            int bits = (b[i] & 0xFF) << 16 | (b[i + 1] & 0xFF) << 8 | (b[i + 2] & 0xFF);
            o[p++] = BASE64[bits >>> 18];
            o[p++] = BASE64[(bits >>> 12) & 0x3F];
            o[p++] = BASE64[(bits >>> 6) & 0x3F];
            o[p++] = BASE64[bits & 0x3F];
        }
        int rest = to - i;
        if (rest == 1) {
            int bits = (b[i] & 0xFF) << 16;
            o[p++] = BASE64[bits >>> 18];
            o[p++] = BASE64[(bits >>> 12) & 0x3F];
            o[p++] = '=';
            o[p++] = '=';
        } else if (rest == 2) {
            int bits = (b[i] & 0xFF) << 16 | (b[i + 1] & 0xFF) << 8;
            o[p++] = BASE64[bits >>> 18];
            o[p++] = BASE64[(bits >>> 12) & 0x3F];
            o[p++] = BASE64[(bits >>> 6) & 0x3F];
            o[p++] = '=';
        }
        o[p++] = '"';
        len = p;
    }
}
