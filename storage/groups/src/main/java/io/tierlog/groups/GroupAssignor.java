package io.tierlog.groups;

import io.tierlog.log.TopicPartition;

import java.util.Collection;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The assignors a group of the service's may run, by Kafka's server-side names (KIP-848's {@code ServerAssignor},
 * {@code group.remote.assignor}): {@code uniform}, balanced and sticky over all the group's partitions, and
 * {@code range}, which keeps co-partitioned topics together. A classic consumer's {@code range} protocol asks for the
 * latter; its {@code roundrobin}, {@code sticky} and {@code cooperative-sticky} for the former.
 */
public enum GroupAssignor {
    /** Kafka's default server-side assignor (the first of its {@code group.consumer.assignors}). */
    UNIFORM,
    RANGE;

    /** The name Kafka's protocol and tools use. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Every assignor's name, for messages: "uniform, range". */
    public static String wireNames() {
        StringBuilder out = new StringBuilder();
        for (GroupAssignor a : values()) {
            out.append(out.isEmpty() ? "" : ", ").append(a.wireName());
        }
        return out.toString();
    }

    /** The assignor a client names, if the service has it. */
    public static Optional<GroupAssignor> named(String name) {
        for (GroupAssignor a : values()) {
            if (a.wireName().equals(name)) {
                return Optional.of(a);
            }
        }
        return Optional.empty();
    }

    /**
     * The assignor a group runs: the one most of its members name, as Kafka's coordinator chooses; a tie, or no
     * member naming any (HTTP members name none), goes to the first in declaration order, {@link #UNIFORM}.
     */
    static GroupAssignor preferred(Collection<String> named) {
        Map<GroupAssignor, Integer> votes = new EnumMap<>(GroupAssignor.class);
        named.forEach(n -> named(n).ifPresent(a -> votes.merge(a, 1, Integer::sum)));
        GroupAssignor best = UNIFORM;
        for (GroupAssignor a : values()) {
            if (votes.getOrDefault(a, 0) > votes.getOrDefault(best, 0)) {
                best = a;
            }
        }
        return best;
    }

    /**
     * The group's target: see {@link StickyBalancedAssignor#assign} for the arguments; {@code warm} is the state
     * each member keeps of partitions it does not own (a streams member's standby tasks and stores on its disk),
     * which {@link #RANGE} places an orphaned partition with first.
     */
    Map<String, Set<TopicPartition>> assign(Map<String, Set<String>> subscriptions,
                                            Map<String, Integer> partitionCounts,
                                            Map<String, Set<TopicPartition>> previous,
                                            WarmState warm) {
        return switch (this) {
            case UNIFORM -> StickyBalancedAssignor.assign(subscriptions, partitionCounts, previous);
            case RANGE -> RangeAssignor.assign(subscriptions, partitionCounts, previous, warm);
        };
    }
}
