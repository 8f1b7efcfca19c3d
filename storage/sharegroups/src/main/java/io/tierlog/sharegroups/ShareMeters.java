package io.tierlog.sharegroups;

/** Counters share groups report to (Micrometer in the service). Thread-safe implementations. */
public interface ShareMeters {
    ShareMeters NONE = new ShareMeters() {
        @Override
        public void leased(int records, int redeliveries) {
        }

        @Override
        public void deadLettered(int records) {
        }
    };

    /** {@code records} leased, of which {@code redeliveries} had been delivered before. */
    void leased(int records, int redeliveries);

    /** {@code records} produced to a dead-letter topic. */
    void deadLettered(int records);
}
