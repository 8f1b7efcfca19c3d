package io.tierlog.index;

import io.tierlog.log.Position;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Entries gathered by the indexer for one atomic write: offset entries (batch boundaries), time entries
 * (running max timestamp at an offset entry) and key entries (a record key's latest offset). Not thread-safe; owned by one indexing run.
 */
final class IndexUpdate {
    record TimeEntry(long timestamp, Position position) {
    }

    /** Marks a key whose latest record is a tombstone: its entry is deleted. */
    static final long TOMBSTONE = -1;

    private final List<Position> offsets = new ArrayList<>();
    private final List<TimeEntry> times = new ArrayList<>();
    /** Record key to the offset of its latest record seen by this update (or {@link #TOMBSTONE}); last wins. */
    private final Map<ByteBuffer, Long> keys = new LinkedHashMap<>();

    void offset(Position boundary) {
        offsets.add(boundary);
    }

    void time(long timestamp, Position boundary) {
        times.add(new TimeEntry(timestamp, boundary));
    }

    /** {@code key} (copied) had its latest record at {@code offset}, or a tombstone there ({@link #TOMBSTONE}). */
    void key(ByteBuffer key, long offset) {
        ByteBuffer copy = ByteBuffer.allocate(key.remaining()).put(key.duplicate()).flip();
        keys.put(copy, offset);
    }

    Map<ByteBuffer, Long> keys() {
        return keys;
    }

    List<Position> offsets() {
        return offsets;
    }

    List<TimeEntry> times() {
        return times;
    }

    int size() {
        return offsets.size() + times.size() + keys.size();
    }

    void clear() {
        offsets.clear();
        times.clear();
        keys.clear();
    }
}
