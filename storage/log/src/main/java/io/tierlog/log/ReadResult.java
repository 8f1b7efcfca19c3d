package io.tierlog.log;

import io.tierlog.log.format.LogRecord;

import java.util.List;

/**
 * Records read from a partition, in offset order, and the offset to read next ({@code nextOffset} equals the
 * requested offset when nothing was read).
 */
public record ReadResult(List<LogRecord> records, long nextOffset) {
    public ReadResult {
        records = List.copyOf(records);
    }
}
