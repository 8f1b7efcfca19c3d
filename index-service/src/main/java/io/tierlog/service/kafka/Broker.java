package io.tierlog.service.kafka;

/** One service instance as a Kafka broker: its node id on the hot volume and where clients reach it. */
public record Broker(int nodeId, String host, int port) {
}
