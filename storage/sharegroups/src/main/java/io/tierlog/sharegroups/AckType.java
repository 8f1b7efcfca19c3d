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

    /** The type named as in the API ({@code accept}, ...), or null for any other text. */
    public static AckType parse(String text) {
        for (AckType t : values()) {
            if (t.name().toLowerCase(Locale.ROOT).equals(text)) {
                return t;
            }
        }
        return null;
    }
}
