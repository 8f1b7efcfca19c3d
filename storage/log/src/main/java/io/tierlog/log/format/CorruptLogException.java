package io.tierlog.log.format;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.util.Map;

/**
 * Bytes of the log failed validation (CRC32C, length, magic or offset order) where they cannot be an
 * in-flight append. Never served as data and never skipped silently.
 */
public class CorruptLogException extends TierlogException {
    public CorruptLogException(String where, long position, String why) {
        super(ErrorType.CORRUPT_RECORD, "corrupt record batch in " + where + " at position " + position + ": " + why,
                Map.of("position", position));
    }
}
