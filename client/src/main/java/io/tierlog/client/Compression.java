package io.tierlog.client;

/**
 * How the producer compresses a batch's records (Kafka's attribute codes). Only the codecs the JDK has: the client
 * carries no native or third-party compression library. A consumer meets other codecs only in batches written by
 * Kafka clients over the Kafka listener; it then reads those partitions as JSON (see {@link Consumer}).
 */
public enum Compression {
    NONE(0),
    GZIP(1);

    final int code;

    Compression(int code) {
        this.code = code;
    }
}
