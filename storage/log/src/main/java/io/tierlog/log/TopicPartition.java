package io.tierlog.log;

/** A partition of a topic. Its hot directory is named {@code <topic>-<partition>}, as Kafka names it. */
public record TopicPartition(String topic, int partition) {
    public TopicPartition {
        Names.requireValidTopic(topic);
        if (partition < 0) {
            throw new IllegalArgumentException("partition must be >= 0: " + partition);
        }
    }

    public String dirName() {
        return topic + "-" + partition;
    }

    @Override
    public String toString() {
        return dirName();
    }
}
