package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.tierlog.access.Principal;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;
import io.tierlog.service.PooledDirectMemory;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import jakarta.inject.Inject;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code KafkaConnection.waitForMemory}: a request the JVM has no direct memory for does not close its connection;
 * the connection tries again on a timer (no new bytes from the client are needed to wake it), and once memory is
 * back the request is read whole and answered. The connection is the listener's own class over a server of this
 * test's, so that its memory can run out on demand.
 */
@QuarkusTest
class KafkaConnectionMemoryWaitTest {
    @Inject
    KafkaApis apis;
    @Inject
    Vertx vertx;

    /** Pooled memory that throws as an exhausted direct-memory limit does while {@code refuse} is set. */
    private static final class ScarceMemory implements ReadMemory {
        final PooledDirectMemory pool = new PooledDirectMemory();
        final AtomicBoolean refuse = new AtomicBoolean(true);
        final AtomicInteger refused = new AtomicInteger();
        final CountDownLatch triedThrice = new CountDownLatch(3);

        @Override
        public ReadBuffer allocate(int capacity) {
            if (refuse.get()) {
                refused.incrementAndGet();
                triedThrice.countDown();
                throw new OutOfMemoryError("Cannot reserve " + capacity + " bytes of direct buffer memory");
            }
            return pool.allocate(capacity);
        }
    }

    @Test
    void aRequestWithoutMemoryWaitsAndIsAnsweredOnceMemoryIsBackWithoutNewBytes() throws Exception {
        ScarceMemory memory = new ScarceMemory();
        NetServer server = vertx.createNetServer(new NetServerOptions().setHost("127.0.0.1").setPort(0))
                .connectHandler(socket -> new KafkaConnection(socket, apis, 1 << 20, Principal.ANONYMOUS, memory)
                        .start())
                .listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        try (RawKafka raw = new RawKafka(server.actualPort())) {
            short v = 3;
            org.apache.kafka.common.requests.RequestHeader header =
                    new org.apache.kafka.common.requests.RequestHeader(ApiKeys.API_VERSIONS, v, "raw", 1);
            raw.send(header, new ApiVersionsRequest.Builder().build(v));

            // Tried again on the timer (10, 20, 40 ms...), with no further byte from the client.
            assertThat(memory.triedThrice.await(20, TimeUnit.SECONDS)).as("retries: %d", memory.refused.get()).isTrue();

            memory.refuse.set(false);
            ApiVersionsResponse answer = (ApiVersionsResponse) org.apache.kafka.common.requests.AbstractResponse
                    .parseResponse(raw.receive(), header);
            assertThat(answer.data().errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(answer.data().apiKeys().find(ApiKeys.FETCH.id)).isNotNull();
        } finally {
            server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
        assertThat(memory.pool.heldBytes()).as("the request's memory went back").isZero();
    }
}
