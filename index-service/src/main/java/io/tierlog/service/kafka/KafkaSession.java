package io.tierlog.service.kafka;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * What the listener keeps about one client connection beyond its framing: the order of its produce requests.
 *
 * <p>Kafka appends a connection's produce requests in the order they were sent (its broker handles one request of a
 * connection at a time), and an idempotent producer with several requests in flight relies on it: its batches carry
 * consecutive sequences, and one appended before its predecessor would be OUT_OF_ORDER_SEQUENCE_NUMBER. So a
 * connection's produce requests run one after the other ({@link #inProduceOrder}); other requests stay pipelined.
 *
 * <p>Touched on the connection's event loop only (where {@link KafkaApis#handle} is called).
 */
final class KafkaSession {
    private CompletableFuture<?> lastProduce = CompletableFuture.completedFuture(null);

    /** Starts {@code produce} once this connection's previous produce request is answered (or failed). */
    <T> CompletableFuture<T> inProduceOrder(Supplier<CompletableFuture<T>> produce) {
        CompletableFuture<T> next = lastProduce.handle((r, e) -> null).thenCompose(v -> produce.get());
        lastProduce = next;
        return next;
    }
}
