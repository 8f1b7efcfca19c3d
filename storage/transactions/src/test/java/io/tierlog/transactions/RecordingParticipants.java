package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The module's boundary, recorded: one {@link Marker} per partition written, one {@link OffsetCommit} per group
 * committed. {@link #failOn} makes a write throw (after the markers before it were recorded, like a partition log
 * failing midway). Thread-safe, shareable by several coordinators (two "instances").
 */
final class RecordingParticipants implements TransactionParticipants {
    record Marker(long producerId, short epoch, boolean commit, TopicPartition partition) {
    }

    record OffsetCommit(String groupId, Map<TopicPartition, PendingOffset> offsets) {
    }

    private final List<Marker> markers = new ArrayList<>();
    private final List<OffsetCommit> offsetCommits = new ArrayList<>();
    private volatile Predicate<TopicPartition> failOn = tp -> false;
    private volatile boolean failOffsets;
    private volatile Runnable beforeMarkers = () -> { };

    /** Runs {@code hook} at the start of every marker write (on the writing thread, under the id's lock). */
    void beforeMarkers(Runnable hook) {
        this.beforeMarkers = hook;
    }

    /** Markers to partitions matching {@code fail} throw, from now on. */
    void failOn(Predicate<TopicPartition> fail) {
        this.failOn = fail;
    }

    void failOffsets(boolean fail) {
        this.failOffsets = fail;
    }

    void heal() {
        failOn = tp -> false;
        failOffsets = false;
    }

    @Override
    public synchronized void writeMarkers(long producerId, short producerEpoch, boolean commit,
                                          Collection<TopicPartition> partitions) {
        beforeMarkers.run();
        for (TopicPartition tp : partitions) {
            if (failOn.test(tp)) {
                throw new IllegalStateException("injected marker failure on " + tp);
            }
            markers.add(new Marker(producerId, producerEpoch, commit, tp));
        }
    }

    @Override
    public synchronized void commitOffsets(String groupId, Map<TopicPartition, PendingOffset> offsets) {
        if (failOffsets) {
            throw new IllegalStateException("injected offset commit failure");
        }
        offsetCommits.add(new OffsetCommit(groupId, Map.copyOf(offsets)));
    }

    synchronized List<Marker> markers() {
        return List.copyOf(markers);
    }

    synchronized List<OffsetCommit> offsetCommits() {
        return List.copyOf(offsetCommits);
    }
}
