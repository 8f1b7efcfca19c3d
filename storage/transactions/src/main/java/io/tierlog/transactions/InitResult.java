package io.tierlog.transactions;

/** InitProducerId's answer; producer id and epoch are -1 unless {@code error} is NONE. */
public record InitResult(TxnError error, long producerId, short producerEpoch) {
    static InitResult failed(TxnError error) {
        return new InitResult(error, -1L, (short) -1);
    }
}
