package io.tierlog.bench.compare;

/**
 * How Tierlog's producer in the comparison encodes its produce requests: the same records either way, and the
 * report gives each its own rows against the same Kafka runs.
 */
public enum ProduceBody {
    /** {@code application/json}, {@code encoding=json}, the partition named on every record; bodies pre-built. */
    JSON("JSON", "produce", "half-peak"),
    /**
     * {@code application/vnd.tierlog.record-batches} with {@code ?partition=P}: one Kafka RecordBatch v2 per request,
     * built by kafka-clients' {@code MemoryRecordsBuilder} inside the timed region ({@link RecordBatchBody}).
     */
    RECORD_BATCHES("record batches", "produce-batches", "half-peak-batches");

    private final String label;
    private final String producePhase;
    private final String halfPeakPhase;

    ProduceBody(String label, String producePhase, String halfPeakPhase) {
        this.label = label;
        this.producePhase = producePhase;
        this.halfPeakPhase = halfPeakPhase;
    }

    /** For tables and logs: "JSON", "record batches". */
    public String label() {
        return label;
    }

    /** The results phase of Tierlog's full-throttle produce with this body (Kafka's is always {@code produce}). */
    public String producePhase() {
        return producePhase;
    }

    /** The results phase of Tierlog's paced half-peak produce with this body (Kafka's is {@code half-peak}). */
    public String halfPeakPhase() {
        return halfPeakPhase;
    }
}
