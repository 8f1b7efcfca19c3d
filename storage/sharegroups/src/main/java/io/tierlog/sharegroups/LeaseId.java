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
        byte[] text = new byte[prefix.length + 20 + 1 + 20 + 1 + 11];
        System.arraycopy(prefix, 0, text, 0, prefix.length);
        int n = prefix.length;
        n = digits(offset, text, n);
        text[n++] = '|';
        n = digits(incarnation, text, n);
        text[n++] = '|';
        n = digits(deliveryCount, text, n);
        return Base64.getUrlEncoder().withoutPadding().encode(n == text.length ? text : Arrays.copyOf(text, n));
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

    /** The lease a string names, or empty when it is not one this service handed out (in any format version). */
    public static Optional<LeaseId> decode(String lease) {
        try {
            // Split by hand: this runs once per ack, and String.split showed in profiles.
            String text = new String(Base64.getUrlDecoder().decode(lease), StandardCharsets.UTF_8);
            String[] f = new String[7];
            int from = 0;
            for (int i = 0; i < 6; i++) {
                int bar = text.indexOf('|', from);
                if (bar < 0) {
                    return Optional.empty();
                }
                f[i] = text.substring(from, bar);
                from = bar + 1;
            }
            f[6] = text.substring(from);
            if (f[6].indexOf('|') >= 0 || !f[0].equals(VERSION) || f[1].isEmpty() || f[2].isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(new LeaseId(f[1], f[2], Integer.parseInt(f[3]), Long.parseLong(f[4]),
                    Long.parseLong(f[5]), Integer.parseInt(f[6])));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
