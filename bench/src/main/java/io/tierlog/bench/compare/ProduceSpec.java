package io.tierlog.bench.compare;

/**
 * One produce run: {@code records} values of the payload, spread over {@code producers} concurrent clients,
 * each client batching as it does best ({@code batchRecords} is the Tierlog request size; Kafka batches by
 * {@code linger.ms}/{@code batch.size}). {@code recordsPerSecond <= 0} means as fast as possible; otherwise the
 * aggregate rate is paced and latency is measured from each record's scheduled send time, so a stalled
 * client cannot hide its queueing delay (no coordinated omission).
 */
public record ProduceSpec(long records, int producers, int batchRecords, double recordsPerSecond, Payload payload) {
    public ProduceSpec {
        if (records < 1 || producers < 1 || batchRecords < 1) {
            throw new IllegalArgumentException("records, producers and batchRecords must be >= 1");
        }
    }

    public boolean paced() {
        return recordsPerSecond > 0;
    }

    /** Records the given producer (0-based) sends: an even share, the first ones taking the remainder. */
    public long recordsFor(int producer) {
        long share = records / producers;
        return share + (producer < records % producers ? 1 : 0);
    }
}
