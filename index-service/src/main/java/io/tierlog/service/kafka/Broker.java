package io.tierlog.service.kafka;

/** This service instance as a Kafka broker: the only node of its cluster, leader of every partition. */
public record Broker(int nodeId, String host, int port) {
}
