package io.tierlog.bench.compaction;

import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.Ports;
import org.gaul.s3proxy.AccessGrant;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * An S3Proxy on 127.0.0.1 inside the benchmark JVM (objects as files under a directory, {@link EmbeddedS3}'s
 * credentials) that counts the S3 requests it serves: S3Proxy asks its blob-store locator once per signed request,
 * so counting there counts every request, retries included. Thread-safe.
 */
final class RequestCountingS3 implements AutoCloseable {
    private final S3Proxy proxy;
    private final BlobStore blobStore;
    private final URI endpoint;
    private final AtomicLong requests = new AtomicLong();

    private RequestCountingS3(Path dir) throws Exception {
        Files.createDirectories(dir);
        blobStore = new FilesystemNio2BlobStore(dir.toAbsolutePath().toString());
        endpoint = URI.create("http://127.0.0.1:" + Ports.freeLoopbackPort());
        proxy = S3Proxy.builder()
                .blobStore(blobStore)
                .endpoint(endpoint)
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, EmbeddedS3.ACCESS_KEY, EmbeddedS3.SECRET_KEY)
                .build();
        proxy.setBlobStoreLocator((identity, container, blob) -> {
            requests.incrementAndGet();
            return EmbeddedS3.ACCESS_KEY.equals(identity) ? new AccessGrant(EmbeddedS3.SECRET_KEY, blobStore) : null;
        });
    }

    static RequestCountingS3 start(Path dir) throws Exception {
        RequestCountingS3 s3 = new RequestCountingS3(dir);
        s3.proxy.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!"STARTED".equals(s3.proxy.getState())) {
            if (System.nanoTime() > deadline) {
                s3.proxy.stop();
                throw new IllegalStateException("S3Proxy did not start on " + s3.endpoint);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        return s3;
    }

    URI endpoint() {
        return endpoint;
    }

    void createBucket(String bucket) {
        if (!blobStore.containerExists(bucket)) {
            blobStore.createContainer(bucket);
        }
    }

    long requests() {
        return requests.get();
    }

    void reset() {
        requests.set(0);
    }

    @Override
    public void close() throws Exception {
        proxy.stop();
    }
}
