package io.tierlog.service.kafka;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The brokers as this instance sees them at one moment: itself and every live instance on the hot volume, by node
 * id ({@link BrokerRegistry}). Immutable.
 *
 * <p>Leadership is advertised only, to spread clients' connections: every instance serves every partition, so a
 * client that asks a broker that is not (or no longer) the leader is served all the same, and every live broker is
 * a replica of every partition. A partition's leader is a function of the live set (and the client's rack) alone,
 * so instances that see the same live brokers advertise the same leaders.
 *
 * <p><b>Racks</b> (docs/kafka.md, "Racks"): a client that names its rack is given leaders, and read replicas
 * (KIP-392), in that rack when any live broker is in it, so its traffic stays in its availability zone.
 */
record KafkaCluster(Broker self, List<Broker> live) {
    /** {@code tierlog_rack=<rack>} as a word of a client id of its own (after a start, comma, space, ...). */
    private static final Pattern RACK_HINT = Pattern.compile("(?:^|[^A-Za-z0-9_])tierlog_rack=([A-Za-z0-9._-]+)");

    /** The lowest live node id: Kafka clients want a controller; nothing is controlled by it here. */
    Broker controller() {
        return live.get(0);
    }

    /** The broker advertised as the leader of {@code partition} of {@code topic} to a client of no known rack. */
    Broker leaderOf(String topic, int partition) {
        return spread(live, topic, partition);
    }

    /**
     * The leader advertised to a client in {@code rack}: one of that rack's live brokers, spread as
     * {@link #leaderOf(String, int)} spreads over all; any live broker when none is in the rack (or rack is null).
     */
    Broker leaderOf(String topic, int partition, String rack) {
        List<Broker> local = inRack(rack);
        return spread(local.isEmpty() ? live : local, topic, partition);
    }

    /** Every live broker, {@code leader} first: each can serve the partition (they share the volume). */
    List<Integer> replicas(Broker leader) {
        List<Integer> ids = new ArrayList<>(live.size());
        ids.add(leader.nodeId());
        for (Broker b : live) {
            if (b.nodeId() != leader.nodeId()) {
                ids.add(b.nodeId());
            }
        }
        return ids;
    }

    /**
     * Where a consumer in {@code rack} fetching from this broker should fetch {@code partition} instead (Kafka's
     * preferred read replica, KIP-392), or null to read here: this broker is in the rack, the rack is unnamed, or
     * no live broker is in it.
     */
    Broker readReplicaFor(String topic, int partition, String rack) {
        if (rack == null || rack.isEmpty() || rack.equals(self.rack())) {
            return null;
        }
        List<Broker> local = inRack(rack);
        return local.isEmpty() ? null : spread(local, topic, partition);
    }

    /**
     * The rack a client names in its {@code client.id} as {@code tierlog_rack=<rack>} (Kafka clients send no rack
     * in Metadata, so this is how a producer asks for leaders in its own zone); null when it names none.
     */
    static String rackOf(String clientId) {
        if (clientId == null) {
            return null;
        }
        Matcher m = RACK_HINT.matcher(clientId);
        return m.find() ? m.group(1) : null;
    }

    private List<Broker> inRack(String rack) {
        if (rack == null || rack.isEmpty()) {
            return List.of();
        }
        List<Broker> local = new ArrayList<>();
        for (Broker b : live) {
            if (rack.equals(b.rack())) {
                local.add(b);
            }
        }
        return local;
    }

    private static Broker spread(List<Broker> brokers, String topic, int partition) {
        // Consecutive partitions of a topic go to consecutive brokers, starting at a place the name picks.
        return brokers.get(Math.floorMod(topic.hashCode() + partition, brokers.size()));
    }
}
