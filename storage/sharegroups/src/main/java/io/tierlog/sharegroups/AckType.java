package io.tierlog.sharegroups;

import java.util.Locale;

/** What a consumer says about a leased record. */
public enum AckType {
    /** Done for good. */
    ACCEPT,
    /** Available again after the redelivery delay (or treated as rejected at max.delivery.attempts). */
    RELEASE,
    /** Never delivered again; to the dead-letter topic if one is set. */
    REJECT,
    /** The lease extended to now + its lease length. */
    RENEW;

    private static final AckType[] TYPES = values();
    /** The API names, made once: parse runs once per ack (its lower-casing per call showed in allocation profiles). */
    private static final String[] NAMES = java.util.Arrays.stream(TYPES).map(t -> t.name().toLowerCase(Locale.ROOT))
            .toArray(String[]::new);

    /** The type named as in the API ({@code accept}, ...), or null for any other text. */
    public static AckType parse(String text) {
        for (int i = 0; i < TYPES.length; i++) {
            if (NAMES[i].equals(text)) {
                return TYPES[i];
            }
        }
        return null;
    }
}
