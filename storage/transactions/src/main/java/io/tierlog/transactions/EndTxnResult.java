package io.tierlog.transactions;

/**
 * EndTxn's answer under transaction version 2: the producer id and epoch the producer continues with (the bumped
 * epoch, or epoch 0 under a new id once the old ran out); -1 unless {@code error} is NONE.
 */
public record EndTxnResult(TxnError error, long producerId, short producerEpoch) {
    static EndTxnResult failed(TxnError error) {
        return new EndTxnResult(error, -1L, (short) -1);
    }
}
