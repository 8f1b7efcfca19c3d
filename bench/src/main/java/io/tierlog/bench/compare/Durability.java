package io.tierlog.bench.compare;

/**
 * The durability an acknowledgement promises, set equal on both systems for a fair comparison.
 */
public enum Durability {
    /** Data is fsynced before each acknowledgement: Kafka topic {@code flush.messages=1}, Tierlog {@code tierlog.fsync=always}. */
    ALWAYS("fsync before ack", "flush.messages=1", "tierlog.fsync=always"),
    /** Acknowledged from the OS page cache, flushed by the OS later: Kafka's default, Tierlog {@code tierlog.fsync=never}. */
    NEVER("page cache (no fsync)", "Kafka default (no flush.messages)", "tierlog.fsync=never");

    private final String label;
    private final String kafkaSetting;
    private final String tierlogSetting;

    Durability(String label, String kafkaSetting, String tierlogSetting) {
        this.label = label;
        this.kafkaSetting = kafkaSetting;
        this.tierlogSetting = tierlogSetting;
    }

    public String label() {
        return label;
    }

    public String kafkaSetting() {
        return kafkaSetting;
    }

    public String tierlogSetting() {
        return tierlogSetting;
    }

    /** The value of the index-service's {@code tierlog.fsync} key. */
    public String tierlogFsync() {
        return this == ALWAYS ? "always" : "never";
    }
}
