package io.tierlog.log;

import java.io.IOException;
import java.util.Map;

/**
 * Recognises a write that failed because the hot volume has no room ({@code ENOSPC}, or {@code EDQUOT} on a volume
 * with quotas) and turns it into the contract's {@code 503 hot-tier-full}. The JDK reports both as a plain
 * {@link IOException} whose message is the C library's text for the errno, so the message is all there is to go by.
 * Stateless.
 */
public final class NoSpaceLeft {
    /** {@code strerror(ENOSPC)} and {@code strerror(EDQUOT)} on Linux (glibc and musl). */
    private static final String[] MESSAGES = {"No space left on device", "Disk quota exceeded"};
    /** The {@code reason} member of the problem, also the metric label. */
    public static final String REASON = "no-space";

    private NoSpaceLeft() {
    }

    /** True if {@code e} or one of its causes is an {@link IOException} saying the volume is out of space. */
    public static boolean causedBy(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof IOException && c.getMessage() != null) {
                for (String m : MESSAGES) {
                    if (c.getMessage().contains(m)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** The refusal for an append to {@code partition} that ran out of space; the detail names no path. */
    public static TierlogException refusal(TopicPartition partition, Throwable cause) {
        return new TierlogException(ErrorType.HOT_TIER_FULL, "the hot volume has no space left for an append to "
                + partition + "; nothing of the request was appended", Map.of("reason", REASON), cause);
    }
}
