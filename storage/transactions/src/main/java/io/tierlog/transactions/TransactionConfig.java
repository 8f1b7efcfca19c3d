package io.tierlog.transactions;

import java.time.Duration;
import java.util.Objects;

/**
 * @param maxTimeout   Kafka's {@code transaction.max.timeout.ms}: the largest transaction timeout a producer may ask for
 * @param idExpiration Kafka's {@code transactional.id.expiration.ms}: an id idle this long is forgotten
 */
public record TransactionConfig(Duration maxTimeout, Duration idExpiration) {
    /** Kafka's defaults: 15 minutes, 7 days. */
    public static final TransactionConfig DEFAULTS = new TransactionConfig(Duration.ofMinutes(15), Duration.ofDays(7));

    public TransactionConfig {
        Objects.requireNonNull(maxTimeout, "maxTimeout");
        Objects.requireNonNull(idExpiration, "idExpiration");
        if (maxTimeout.isNegative() || maxTimeout.isZero() || idExpiration.isNegative() || idExpiration.isZero()) {
            throw new IllegalArgumentException("maxTimeout and idExpiration must be positive");
        }
    }
}
