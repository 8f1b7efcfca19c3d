package io.tierlog.log.format;

/**
 * The idempotence fields of a batch: Kafka's producer id, epoch and base sequence. {@link #NONE} is Kafka's
 * "no producer" (id -1, epoch -1, sequence -1).
 */
public record ProducerIdentity(long producerId, short epoch, int sequence) {
    public static final ProducerIdentity NONE = new ProducerIdentity(-1L, (short) -1, -1);

    public boolean isNone() {
        return producerId < 0;
    }
}
