package io.tierlog.service.kafka;

import java.util.List;

/**
 * The brokers as this instance sees them at one moment: itself and every live instance on the hot volume, by node
 * id ({@link BrokerRegistry}). Immutable.
 *
 * <p>Leadership is advertised only, to spread clients' connections: every instance serves every partition, so a
 * client that asks a broker that is not (or no longer) the leader is served all the same. A partition's leader is
 * a function of the live set alone, so instances that see the same live brokers advertise the same leaders.
 */
record KafkaCluster(Broker self, List<Broker> live) {

    /** The lowest live node id: Kafka clients want a controller; nothing is controlled by it here. */
    Broker controller() {
        return live.get(0);
    }

    /** The broker advertised as the leader of {@code partition} of {@code topic}. */
    Broker leaderOf(String topic, int partition) {
        // Consecutive partitions of a topic go to consecutive brokers, starting at a place the name picks.
        return live.get(Math.floorMod(topic.hashCode() + partition, live.size()));
    }
}
