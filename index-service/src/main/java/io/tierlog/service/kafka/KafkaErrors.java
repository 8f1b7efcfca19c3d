package io.tierlog.service.kafka;

import io.tierlog.log.TierlogException;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;

/** Tierlog's error kinds as the Kafka error codes a Kafka client acts on (retries, refreshes metadata, gives up). */
final class KafkaErrors {
    private KafkaErrors() {
    }

    static Errors of(Throwable e) {
        Throwable cause = unwrap(e);
        if (cause instanceof TierlogException t) {
            return switch (t.type()) {
                case UNKNOWN_TOPIC, UNKNOWN_PARTITION -> Errors.UNKNOWN_TOPIC_OR_PARTITION;
                case INVALID_TOPIC -> Errors.INVALID_TOPIC_EXCEPTION;
                case INVALID_CONFIG -> Errors.INVALID_CONFIG;
                case INVALID_GROUP -> Errors.INVALID_GROUP_ID;
                case TOPIC_EXISTS -> Errors.TOPIC_ALREADY_EXISTS;
                case OUT_OF_ORDER_SEQUENCE -> Errors.OUT_OF_ORDER_SEQUENCE_NUMBER;
                case FENCED_PRODUCER -> Errors.INVALID_PRODUCER_EPOCH;
                case INVALID_TXN_STATE -> Errors.INVALID_TXN_STATE;
                case RECORD_TOO_LARGE, REQUEST_TOO_LARGE -> Errors.MESSAGE_TOO_LARGE;
                // The produce path's body checks (CRC, offsets, sizes, magic) and a stored batch that fails its CRC.
                case BAD_REQUEST, CORRUPT_RECORD -> Errors.CORRUPT_MESSAGE;
                case OFFSET_OUT_OF_RANGE -> Errors.OFFSET_OUT_OF_RANGE;
                case GROUP_PROTOCOL_MISMATCH -> Errors.INCONSISTENT_GROUP_PROTOCOL;
                // Retriable in Kafka's clients, as a cold tier that is down for a while should be.
                case COLD_TIER_UNAVAILABLE -> Errors.KAFKA_STORAGE_ERROR;
                default -> Errors.UNKNOWN_SERVER_ERROR;
            };
        }
        if (cause instanceof ApiException) {
            return Errors.forException(cause);
        }
        return Errors.UNKNOWN_SERVER_ERROR;
    }

    /** The message a client sees: Tierlog's own detail for a named error, nothing internal otherwise. */
    static String message(Throwable e) {
        Throwable cause = unwrap(e);
        if (cause instanceof TierlogException || cause instanceof ApiException) {
            return cause.getMessage();
        }
        return null;
    }

    /** The error as the exception Kafka's request classes build error responses from. */
    static ApiException exception(Throwable e) {
        return of(e).exception(message(e));
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof java.util.concurrent.CompletionException
                || e instanceof java.util.concurrent.ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
