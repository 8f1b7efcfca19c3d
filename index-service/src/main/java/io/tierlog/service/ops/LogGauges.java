package io.tierlog.service.ops;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.quarkus.runtime.StartupEvent;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.topics.TopicAdmin;
import io.tierlog.service.groups.GroupOffsets;
import io.tierlog.service.metrics.Meters;
import io.tierlog.service.read.PartitionReads;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;

/**
 * Gauges refreshed every {@value #REFRESH_SECONDS} s on the read pool (never on scrape, so a scrape costs no I/O):
 * {@code tierlog_partition_high_watermark{topic,partition}} for every public topic, and
 * {@code tierlog_group_lag{group,topic,partition}}, {@code tierlog_group_lag_seconds{group,topic,partition}} (the
 * age of the first unconsumed record) and {@code tierlog_group_total_lag{group}} for every group.
 * Gauges of deleted topics and vanished partitions are removed.
 */
@Singleton
public class LogGauges {
    private static final Logger LOG = Logger.getLogger(LogGauges.class);
    static final int REFRESH_SECONDS = 5;

    private final Meters meters;
    private final TopicAdmin admin;
    private final PartitionReads reads;
    private final GroupOffsets groups;
    private final ServiceThreads threads;
    private final Map<Tags, Held> highWatermarks = new HashMap<>();
    private final Map<Tags, Held> groupLags = new HashMap<>();
    private final Map<Tags, Held> totalLags = new HashMap<>();
    private final Map<Tags, Held> groupLagSeconds = new HashMap<>();

    private record Held(AtomicLong value, Gauge gauge) {
    }

    public LogGauges(Meters meters, TopicAdmin admin, PartitionReads reads, GroupOffsets groups,
                     ServiceThreads threads) {
        this.meters = meters;
        this.admin = admin;
        this.reads = reads;
        this.groups = groups;
        this.threads = threads;
    }

    void start(@Observes StartupEvent event) {
        threads.timers().scheduleWithFixedDelay(() -> threads.reads().execute(this::refreshQuietly), 0,
                REFRESH_SECONDS, TimeUnit.SECONDS);
    }

    private void refreshQuietly() {
        try {
            refresh();
        } catch (RuntimeException e) {
            // A topic deleted mid-refresh; the next refresh sees the new state.
            LOG.debugf(e, "gauge refresh failed");
        }
    }

    public synchronized void refresh() {
        Set<Tags> seen = new HashSet<>();
        // Each partition's end is looked up once per refresh (it catches the partition's index up), for both gauges.
        Map<TopicPartition, Long> ends = new HashMap<>();
        for (TopicMetadata t : admin.listPublic()) {
            for (int p = 0; p < t.partitions(); p++) {
                Tags tags = Tags.of("topic", t.name(), "partition", Integer.toString(p));
                TopicPartition tp = new TopicPartition(t.name(), p);
                long hw = reads.highWatermark(tp);
                ends.put(tp, hw);
                set(highWatermarks, meters::highWatermark, tags, hw);
                seen.add(tags);
            }
        }
        prune(highWatermarks, seen);
        Set<Tags> seenLag = new HashSet<>();
        Set<Tags> seenTotal = new HashSet<>();
        for (Map.Entry<String, List<GroupOffsets.PartitionLag>> group : groups.lags(ends).entrySet()) {
            String g = group.getKey();
            long total = 0;
            for (GroupOffsets.PartitionLag l : group.getValue()) {
                Tags tags = Tags.of("group", g, "topic", l.topic(), "partition", Integer.toString(l.partition()));
                set(groupLags, meters::groupLag, tags, l.lag());
                set(groupLagSeconds, meters::groupLagSeconds, tags, l.lagMs());
                seenLag.add(tags);
                total += l.lag();
            }
            Tags tags = Tags.of("group", g);
            set(totalLags, meters::groupTotalLag, tags, total);
            seenTotal.add(tags);
        }
        prune(groupLags, seenLag);
        prune(groupLagSeconds, seenLag);
        prune(totalLags, seenTotal);
    }

    /** Sets the gauge of {@code tags}, registering it through {@code register} the first time. */
    private static void set(Map<Tags, Held> held, BiFunction<Tags, AtomicLong, Gauge> register, Tags tags, long value) {
        held.computeIfAbsent(tags, t -> {
            AtomicLong v = new AtomicLong();
            return new Held(v, register.apply(t, v));
        }).value().set(value);
    }

    private void prune(Map<Tags, Held> held, Set<Tags> seen) {
        held.entrySet().removeIf(e -> {
            if (!seen.contains(e.getKey())) {
                meters.remove(e.getValue().gauge());
                return true;
            }
            return false;
        });
    }
}
