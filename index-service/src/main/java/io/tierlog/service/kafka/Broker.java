package io.tierlog.service.kafka;

/**
 * One service instance as a Kafka broker: its node id on the hot volume, where clients reach it, and its rack (the
 * availability zone it runs in; null: none configured).
 */
public record Broker(int nodeId, String host, int port, String rack) {

    public Broker(int nodeId, String host, int port) {
        this(nodeId, host, port, null);
    }
}
