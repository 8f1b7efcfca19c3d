package io.tierlog.sharegroups;

import java.nio.charset.StandardCharsets;
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
        String text = String.join("|", VERSION, group, topic, Integer.toString(partition), Long.toString(offset),
                Long.toString(incarnation), Integer.toString(deliveryCount));
        return Base64.getUrlEncoder().withoutPadding().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    /** The lease a string names, or empty when it is not one this service handed out (in any format version). */
    public static Optional<LeaseId> decode(String lease) {
        try {
            String[] f = new String(Base64.getUrlDecoder().decode(lease), StandardCharsets.UTF_8).split("\\|", -1);
            if (f.length != 7 || !f[0].equals(VERSION) || f[1].isEmpty() || f[2].isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(new LeaseId(f[1], f[2], Integer.parseInt(f[3]), Long.parseLong(f[4]),
                    Long.parseLong(f[5]), Integer.parseInt(f[6])));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
