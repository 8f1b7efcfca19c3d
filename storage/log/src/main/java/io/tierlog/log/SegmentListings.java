package io.tierlog.log;

import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.io.FileVersion;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Partitions' hot segment listings, each reused while its directory's version ({@link FileVersion}: identity, size
 * and modification time, one {@code stat}) is unchanged and settled. A directory's modification time moves whenever
 * an entry in it is created, removed or renamed over (a roll, an eviction, a compacted segment, a producer
 * checkpoint), so a partition whose files did not change since its last listing costs one {@code stat} instead of a
 * listing ({@code open}, {@code getdents}, {@code close}): the background passes visit every partition every pass.
 * The listing is made after the {@code stat}, so it is never older than the version it is kept under.
 *
 * <p>Bounded to {@link #MAX_PARTITIONS} listings, least recently used dropped. Thread-safe.
 */
final class SegmentListings {
    static final int MAX_PARTITIONS = 65_536;

    private record Listed(FileVersion version, boolean settled, List<Long> bases) {
    }

    private final Clock clock;
    private final Function<Path, List<Long>> lister;
    private final Map<TopicPartition, Listed> listed = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<TopicPartition, Listed> eldest) {
            return size() > MAX_PARTITIONS;
        }
    };

    SegmentListings(Clock clock) {
        this(clock, SegmentFiles::segmentBases);
    }

    /** @param lister lists a partition directory's segment bases (tests count the listings) */
    SegmentListings(Clock clock, Function<Path, List<Long>> lister) {
        this.clock = clock;
        this.lister = lister;
    }

    /** Base offsets of the segment files in {@code dir}, partition {@code tp}'s directory, ascending; immutable. */
    List<Long> bases(TopicPartition tp, Path dir) {
        long readAt = clock.millis(); // before the stat: a change after it cannot carry a settled time
        FileVersion version;
        try {
            version = FileVersion.of(Files.readAttributes(dir, BasicFileAttributes.class));
        } catch (NoSuchFileException e) {
            forget(tp);
            return List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        synchronized (listed) {
            Listed seen = listed.get(tp);
            if (seen != null && seen.settled && seen.version.equals(version)) {
                return seen.bases;
            }
        }
        List<Long> bases = List.copyOf(lister.apply(dir));
        synchronized (listed) {
            listed.put(tp, new Listed(version, version.settledBy(readAt), bases));
        }
        return bases;
    }

    private void forget(TopicPartition tp) {
        synchronized (listed) {
            listed.remove(tp);
        }
    }
}
