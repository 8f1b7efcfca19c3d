package io.tierlog.bench.share;

import java.util.Arrays;
import java.util.Locale;

/** The lease answer a Tierlog bench worker asks for ({@code --lease-answer}), and how it acknowledges it. */
enum LeaseAnswer {
    /**
     * {@code Accept: application/vnd.tierlog.leased-ranges}: runs of records under range leases (ADR 0042), then the
     * stored batches; one ack entry per run.
     */
    RANGES("application/vnd.tierlog.leased-ranges"),
    /** {@code Accept: application/vnd.tierlog.leased-batches}: one lease per record, then the stored batches. */
    BATCHES("application/vnd.tierlog.leased-batches"),
    /** JSON records with their per-record leases, read by a streaming parser; one ack entry per record. */
    JSON("application/json");

    final String mediaType;

    LeaseAnswer(String mediaType) {
        this.mediaType = mediaType;
    }

    /** The option's value ({@code ranges}, {@code batches}, {@code json}). */
    static LeaseAnswer parse(String text) {
        for (LeaseAnswer a : values()) {
            if (a.name().toLowerCase(Locale.ROOT).equals(text)) {
                return a;
            }
        }
        throw new IllegalArgumentException("--lease-answer must be one of " + Arrays.stream(values())
                .map(a -> a.name().toLowerCase(Locale.ROOT)).toList() + ": " + text);
    }

    /** Reads an answer of this form. */
    LeasedBatch read(byte[] answer) {
        return switch (this) {
            case RANGES -> LeasedBatch.readRanges(answer);
            case BATCHES -> LeasedBatch.readBatches(answer);
            case JSON -> LeasedBatch.read(answer);
        };
    }
}
