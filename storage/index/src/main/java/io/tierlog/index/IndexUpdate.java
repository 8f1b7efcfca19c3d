package io.tierlog.index;

import io.tierlog.log.Position;

import java.util.ArrayList;
import java.util.List;

/**
 * Entries gathered by the indexer for one atomic write: offset entries (batch boundaries) and time entries
 * (running max timestamp at an offset entry). Not thread-safe; owned by one indexing run.
 */
final class IndexUpdate {
    record TimeEntry(long timestamp, Position position) {
    }

    private final List<Position> offsets = new ArrayList<>();
    private final List<TimeEntry> times = new ArrayList<>();

    void offset(Position boundary) {
        offsets.add(boundary);
    }

    void time(long timestamp, Position boundary) {
        times.add(new TimeEntry(timestamp, boundary));
    }

    List<Position> offsets() {
        return offsets;
    }

    List<TimeEntry> times() {
        return times;
    }

    int size() {
        return offsets.size() + times.size();
    }

    void clear() {
        offsets.clear();
        times.clear();
    }
}
