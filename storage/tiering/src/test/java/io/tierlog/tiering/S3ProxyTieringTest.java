package io.tierlog.tiering;

import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.s3.S3ObjectStore;
import io.tierlog.testkit.S3ProxyServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The tiering contract over S3ObjectStore speaking the real S3 protocol to an in-process S3Proxy. Outages are
 * real: the server is stopped under the client and started again on the same port.
 */
class S3ProxyTieringTest extends TieredStorageContractTest {
    private static final AtomicInteger BUCKETS = new AtomicInteger();
    private static S3ProxyServer server;
    private String bucket;

    @BeforeAll
    static void startServer() {
        server = S3ProxyServer.started();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @BeforeEach
    void ensureRunning() {
        if (!server.isRunning()) {
            server.start();
        }
    }

    @Override
    protected ObjectStore openStore() {
        if (!server.isRunning()) {
            server.start();
        }
        if (bucket == null) {
            bucket = "tiering-" + BUCKETS.incrementAndGet();
            server.createBucket(bucket);
        }
        return S3ObjectStore.builder()
                .endpointOverride(server.endpoint())
                .region(S3ProxyServer.REGION)
                .credentials(S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY)
                .pathStyle(true)
                .bucket(bucket)
                .keyPrefix("cluster-a")
                // Tests stop and restart S3Proxy (storeDown/storeUp); the JDK keeps the old server's closed
                // connections for reuse, and each one costs an attempt. Two attempts were not always enough.
                .maxAttempts(4)
                .backoffBase(Duration.ofMillis(20))
                .connectTimeout(Duration.ofSeconds(2))
                .socketTimeout(Duration.ofSeconds(10))
                .build();
    }

    @Override
    protected void storeDown() {
        server.stop();
    }

    @Override
    protected void storeUp() {
        server.start();
    }
}
