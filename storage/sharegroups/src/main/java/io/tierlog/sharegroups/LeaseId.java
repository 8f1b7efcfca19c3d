package io.tierlog.sharegroups;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.Optional;

/**
 * What an opaque lease string names: a record of a share-partition, the partition's incarnation (so a lease dies
 * with a deleted group) and the delivery it was handed out in. A later delivery of the same record has a higher
 * delivery count, so an ack under an older lease is detected as stale. Encoded as URL-safe base64 of
 * {@code v1|group|topic|partition|offset|incarnation|deliveryCount} (group and topic names cannot hold '|').
 */
public record LeaseId(String group, String topic, int partition, long offset, long incarnation, int deliveryCount) {
    private static final String VERSION = "v1";
    private static final Base64.Encoder URL_ENCODER = Base64.getUrlEncoder().withoutPadding();

    public String encode() {
        return new String(encode(prefix(group, topic, partition), offset, incarnation, deliveryCount),
                StandardCharsets.US_ASCII);
    }

    /** The bytes every lease of one share-partition starts with ({@code v1|group|topic|partition|}), for {@link #encode(byte[], long, long, int)}. */
    static byte[] prefix(String group, String topic, int partition) {
        return String.join("|", VERSION, group, topic, Integer.toString(partition) + "|").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The lease string as ASCII bytes (URL-safe base64, no padding) from a share-partition's {@link #prefix}: what
     * {@link #encode()} gives, without the intermediate strings (a lease answer encodes one per record).
     */
    static byte[] encode(byte[] prefix, long offset, long incarnation, int deliveryCount) {
        return encode(prefix, offset, decimal(incarnation), deliveryCount);
    }

    /** {@code v} in decimal ASCII, for {@link #encode(byte[], long, byte[], int)}. */
    static byte[] decimal(long v) {
        byte[] text = new byte[20];
        return Arrays.copyOf(text, digits(v, text, 0));
    }

    /**
     * {@link #encode(byte[], long, long, int)} with the incarnation already in decimal ({@link #decimal}): every lease of
     * one grant shares it, and its 19 digits were most of the encoding's samples in profiles of the share benchmark.
     */
    static byte[] encode(byte[] prefix, long offset, byte[] incarnationDecimal, int deliveryCount) {
        return encodeFields(prefix, offset, offset, false, incarnationDecimal, deliveryCount);
    }

    /** Writes {@code v} in decimal at {@code at}; returns the index after it. */
    private static int digits(long v, byte[] into, int at) {
        if (v < 0) {
            into[at++] = '-';
            v = -v; // offsets, incarnations and counts are never Long.MIN_VALUE
        }
        int start = at;
        do {
            into[at++] = (byte) ('0' + v % 10);
            v /= 10;
        } while (v != 0);
        for (int i = start, j = at - 1; i < j; i++, j--) {
            byte t = into[i];
            into[i] = into[j];
            into[j] = t;
        }
        return at;
    }

    /**
     * The per-record lease a string names, or empty when it is not a per-record ({@code v1}) lease this service handed
     * out (a range lease, {@code v2}, is read by {@link RangeLease#decode}).
     */
    public static Optional<LeaseId> decode(String lease) {
        return parse(lease, false).filter(r -> !r.ranged())
                .map(r -> new LeaseId(r.group(), r.topic(), r.partition(), r.firstOffset(), r.incarnation(),
                        r.deliveryCount()));
    }

    /**
     * A lease string of either version as a run: a per-record ({@code v1}) lease as the run of its one offset
     * ({@code ranged} false), a range lease ({@code v2}) as its run; empty for anything else. With
     * {@code rangesOnly}, v1 is refused.
     */
    static Optional<RangeLease> parse(String lease, boolean rangesOnly) {
        byte[] text;
        try {
            text = Base64.getUrlDecoder().decode(lease);
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        if (text.length < 3 || text[0] != 'v' || text[2] != '|' || text[1] != '1' && text[1] != '2') {
            return Optional.empty();
        }
        boolean ranged = text[1] == '2';
        if (rangesOnly && !ranged) {
            return Optional.empty();
        }
        // Split and parse over the bytes: this runs once per ack (500 per acks request in the share benchmark), and
        // the substrings and Long.parseLong of the string version were half of an acks request's samples. '|' is
        // ASCII, so it never occurs inside a multi-byte UTF-8 sequence: splitting the bytes splits the text.
        int[] bars = new int[ranged ? 7 : 6];
        int found = 0;
        for (int i = 0; i < text.length; i++) {
            if (text[i] == '|') {
                if (found == bars.length) {
                    return Optional.empty(); // one '|' too many
                }
                bars[found++] = i;
            }
        }
        if (found < bars.length || bars[1] == bars[0] + 1 || bars[2] == bars[1] + 1) {
            return Optional.empty();
        }
        try {
            int b = 3;
            long partition = number(text, bars[2] + 1, bars[3], true);
            long first = number(text, bars[b] + 1, bars[++b], false);
            long last = ranged ? number(text, bars[b] + 1, bars[++b], false) : first;
            long incarnation = number(text, bars[b] + 1, bars[++b], false);
            long deliveryCount = number(text, bars[b] + 1, text.length, true);
            if (last < first) {
                return Optional.empty(); // never handed out
            }
            return Optional.of(new RangeLease(utf8(text, bars[0] + 1, bars[1]), utf8(text, bars[1] + 1, bars[2]),
                    (int) partition, first, last, incarnation, (int) deliveryCount, ranged));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** The bytes every range lease of one share-partition starts with ({@code v2|group|topic|partition|}). */
    static byte[] rangePrefix(String group, String topic, int partition) {
        return String.join("|", RangeLease.VERSION, group, topic, Integer.toString(partition) + "|")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** A range lease's ASCII bytes from its share-partition's {@link #rangePrefix} (as {@link #encode(byte[], long, byte[], int)}). */
    static byte[] encodeRange(byte[] rangePrefix, long first, long last, byte[] incarnationDecimal, int deliveryCount) {
        return encodeFields(rangePrefix, first, last, true, incarnationDecimal, deliveryCount);
    }

    /** {@code prefix first[|last]|incarnation|deliveryCount} as URL-safe base64: a record's lease, or a run's. */
    private static byte[] encodeFields(byte[] prefix, long first, long last, boolean range, byte[] incarnationDecimal,
                                       int deliveryCount) {
        byte[] text = new byte[prefix.length + 2 * 21 + incarnationDecimal.length + 1 + 11];
        System.arraycopy(prefix, 0, text, 0, prefix.length);
        int n = prefix.length;
        n = digits(first, text, n);
        text[n++] = '|';
        if (range) {
            n = digits(last, text, n);
            text[n++] = '|';
        }
        System.arraycopy(incarnationDecimal, 0, text, n, incarnationDecimal.length);
        n += incarnationDecimal.length;
        text[n++] = '|';
        n = digits(deliveryCount, text, n);
        return URL_ENCODER.encode(Arrays.copyOf(text, n));
    }

    /**
     * {@code Integer.parseInt} (when {@code isInt}) or {@code Long.parseLong} of {@code text[from, to)}: plain ASCII
     * decimals (one optional leading '-') that fit are parsed here; anything else (another sign, non-ASCII digits, an
     * overflow) goes through those very methods, so both accept and refuse the same texts.
     */
    private static long number(byte[] text, int from, int to, boolean isInt) {
        int digitsFrom = from < to && text[from] == '-' ? from + 1 : from;
        long max = isInt ? Integer.MAX_VALUE : Long.MAX_VALUE;
        if (digitsFrom < to) {
            long v = 0;
            int i = digitsFrom;
            for (; i < to; i++) {
                int d = text[i] - '0';
                if (d < 0 || d > 9 || v > (max - d) / 10) {
                    break; // not a digit, or MIN_VALUE / an overflow: left to parse*
                }
                v = v * 10 + d;
            }
            if (i == to) {
                return digitsFrom > from ? -v : v;
            }
        }
        String s = utf8(text, from, to);
        return isInt ? Integer.parseInt(s) : Long.parseLong(s);
    }

    private static String utf8(byte[] text, int from, int to) {
        return new String(text, from, to - from, StandardCharsets.UTF_8);
    }
}
