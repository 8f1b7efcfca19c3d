package io.tierlog.client;

/** {@code send} found the producer's buffer full ({@link ProducerConfig.WhenFull#FAIL}, or blocking timed out). */
public class BufferFullException extends TierlogException {
    public BufferFullException(String message) {
        super(message);
    }
}
