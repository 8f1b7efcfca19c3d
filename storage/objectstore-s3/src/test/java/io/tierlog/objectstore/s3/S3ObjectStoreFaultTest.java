package io.tierlog.objectstore.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import io.tierlog.testkit.FaultInjectingProxy;
import io.tierlog.testkit.S3ProxyServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * S3 outages and throttling through the real client stack: the fault proxy refuses connections or answers
 * 503 SlowDown, S3Proxy is stopped and restarted on its port. The client retries twice at most with 10 ms
 * backoff, so each failure surfaces within a second.
 */
class S3ObjectStoreFaultTest {

    private static final String BUCKET = "tierlog-faults";
    private static final ObjectKey KEY = ObjectKey.of("t/0/00000000000000000000.log");
    private static final byte[] BYTES = "segment bytes".getBytes(StandardCharsets.UTF_8);

    private static S3ProxyServer server;
    private static FaultInjectingProxy proxy;
    private ObjectStore viaProxy;

    @BeforeAll
    static void startS3() {
        server = S3ProxyServer.started();
        server.createBucket(BUCKET);
        proxy = FaultInjectingProxy.start(server.endpoint());
    }

    @AfterAll
    static void stopS3() {
        proxy.close();
        server.close();
    }

    @BeforeEach
    void openStore() {
        proxy.passThrough();
        viaProxy = storeAt(proxy.endpoint().toString());
        viaProxy.put(KEY, BYTES);
    }

    @AfterEach
    void closeStore() {
        viaProxy.close();
    }

    private static ObjectStore storeAt(String endpoint) {
        return S3ObjectStore.builder()
                .bucket(BUCKET)
                .keyPrefix("faults")
                .endpointOverride(java.net.URI.create(endpoint))
                .region(S3ProxyServer.REGION)
                .pathStyle(true)
                .credentials(S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY)
                .maxAttempts(2)
                .backoffBase(Duration.ofMillis(10))
                .connectTimeout(Duration.ofMillis(500))
                .socketTimeout(Duration.ofSeconds(2))
                .build();
    }

    private static Map<String, Executable> everyOperation(ObjectStore store) {
        return Map.of(
                "get", () -> store.get(KEY),
                "getRange", () -> store.getRange(KEY, ByteRange.of(0, 4)),
                "head", () -> store.head(KEY),
                "list", () -> store.list("t/", Optional.empty(), 10),
                "put", () -> store.put(KEY, BYTES),
                "putIfAbsent", () -> store.putIfAbsent(ObjectKey.of("t/0/manifest/00000000000000000001.json"), BYTES),
                "delete", () -> store.delete(ObjectKey.of("other")),
                "deleteAll", () -> store.deleteAll(List.of(ObjectKey.of("other"))));
    }

    @Test
    void refusedConnectionsMakeEveryOperationUnavailableUntilS3IsBack() {
        proxy.refuseConnections();
        everyOperation(viaProxy).forEach((name, operation) ->
                assertThrows(ObjectStoreUnavailableException.class, operation, name));

        proxy.passThrough();
        assertArrayEquals(BYTES, viaProxy.get(KEY));
        assertTrue(viaProxy.putIfAbsent(ObjectKey.of("t/0/manifest/00000000000000000001.json"), BYTES),
                "no write slipped through during the outage");
        viaProxy.delete(ObjectKey.of("t/0/manifest/00000000000000000001.json"));
    }

    @Test
    void oneSlowDownIsAbsorbedByTheRetry() {
        int before = proxy.slowDownsServed();
        proxy.slowDownNext(1);
        assertArrayEquals(BYTES, viaProxy.get(KEY));
        assertEquals(1, proxy.slowDownsServed() - before, "the first attempt was throttled");
    }

    @Test
    void persistentSlowDownIsReportedAsUnavailableAfterTheRetries() {
        for (Map.Entry<String, Executable> operation : everyOperation(viaProxy).entrySet()) {
            int before = proxy.slowDownsServed();
            proxy.slowDownNext(2);
            assertThrows(ObjectStoreUnavailableException.class, operation.getValue(), operation.getKey());
            // Switching to a fault closes pooled connections, so an attempt may instead fail on a connection the
            // proxy just closed; either way no attempt reached S3. Reset so no leftover 503 leaks into the next one.
            assertTrue(proxy.slowDownsServed() - before >= 1, operation.getKey() + ": throttled");
            proxy.passThrough();
        }
        proxy.passThrough();
        assertArrayEquals(BYTES, viaProxy.get(KEY));
    }

    @Test
    void delayedResponsesWaitOncePerRequestOnAKeepAliveConnectionAndStillDeliverTheBytes() {
        viaProxy.get(KEY); // the connection is open and pooled before the delay starts
        Duration delay = Duration.ofMillis(150);
        proxy.delayResponses(delay);
        try {
            for (int i = 0; i < 3; i++) {
                long start = System.nanoTime();
                assertArrayEquals(new byte[] {'b', 'y'}, viaProxy.getRange(KEY, ByteRange.of(8, 2)));
                long elapsed = System.nanoTime() - start;
                assertTrue(elapsed >= delay.toNanos(), "request " + i + " took only " + elapsed / 1_000_000 + " ms");
            }
        } finally {
            proxy.passThrough();
        }
    }

    @Test
    void anS3RestartOnTheSamePortIsAnOutageThenServesTheSameObjects() {
        try (ObjectStore direct = storeAt(server.endpoint().toString())) {
            int port = server.port();
            server.stop();
            try {
                ObjectStoreUnavailableException refused =
                        assertThrows(ObjectStoreUnavailableException.class, () -> direct.head(KEY));
                // The reason is in the message, not only in a cause chain that a log line may not show.
                assertTrue(refused.getMessage().contains("S3 unreachable (ConnectException"), refused.getMessage());
                assertThrows(ObjectStoreUnavailableException.class, () -> direct.put(KEY, BYTES));
            } finally {
                server.start();
            }
            assertEquals(port, server.port());
            assertArrayEquals(BYTES, direct.get(KEY));
            assertFalse(direct.putIfAbsent(KEY, new byte[] {1}));
        }
    }
}
