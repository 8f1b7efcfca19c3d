package io.tierlog.service.http;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Strict UTF-8 validation of stored bytes, as the JDK's decoder with {@code REPORT} checks it (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), without decoding: the fetch path only needs to know
 * whether bytes may be embedded in JSON text as they are.
 */
public final class Utf8 {
    private Utf8() {
    }

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long HIGH_BITS = 0x8080808080808080L;

    public static boolean isValid(byte[] b, int from, int to) {
        int i = from;
        while (i < to) {
            // ASCII, the common case, eight bytes at a time.
            while (i + 8 <= to && ((long) LONGS.get(b, i) & HIGH_BITS) == 0) {
                i += 8;
            }
            if (i >= to) {
                break;
            }
            int c = b[i];
            if (c >= 0) {
                i++;
                continue;
            }
            c &= 0xFF;
            int need;
            int min = 0x80;
            int max = 0xBF;
            if (c >= 0xC2 && c <= 0xDF) {
                need = 1;
            } else if (c >= 0xE0 && c <= 0xEF) {
                need = 2;
                if (c == 0xE0) {
                    min = 0xA0;      // overlong below U+0800
                } else if (c == 0xED) {
                    max = 0x9F;      // U+D800..U+DFFF are surrogates
                }
            } else if (c >= 0xF0 && c <= 0xF4) {
                need = 3;
                if (c == 0xF0) {
                    min = 0x90;      // overlong below U+10000
                } else if (c == 0xF4) {
                    max = 0x8F;      // above U+10FFFF
                }
            } else {
                return false;        // a continuation byte, C0/C1 (overlong) or F5..FF
            }
            if (i + need >= to) {
                return false;        // truncated sequence
            }
            int second = b[i + 1] & 0xFF;
            if (second < min || second > max) {
                return false;
            }
            for (int k = 2; k <= need; k++) {
                if ((b[i + k] & 0xC0) != 0x80) {
                    return false;
                }
            }
            i += need + 1;
        }
        return true;
    }
}
