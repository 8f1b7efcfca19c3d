package io.tierlog.bench.compare;

import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.List;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The cold tier for the benchmark: an S3Proxy server inside the benchmark JVM on 127.0.0.1, storing objects as
 * files under a directory (not in memory: a full run uploads about a gigabyte). Requests must be SigV4-signed
 * with {@link #ACCESS_KEY}/{@link #SECRET_KEY}, region {@link #REGION}, path-style. Its CPU is shared with the
 * benchmark's own clients, which the report states.
 */
public final class EmbeddedS3 implements AutoCloseable {
    public static final String ACCESS_KEY = "tierlog-bench-access";
    public static final String SECRET_KEY = "tierlog-bench-secret";
    public static final String REGION = "us-east-1";

    private final S3Proxy proxy;
    private final BlobStore blobStore;
    private final URI endpoint;

    private EmbeddedS3(S3Proxy proxy, BlobStore blobStore, URI endpoint) {
        this.proxy = proxy;
        this.blobStore = blobStore;
        this.endpoint = endpoint;
    }

    public static EmbeddedS3 start(Path dir) throws Exception {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        BlobStore store = new FilesystemNio2BlobStore(dir.toAbsolutePath().toString());
        URI endpoint = URI.create("http://127.0.0.1:" + Ports.freeLoopbackPort());
        S3Proxy proxy = S3Proxy.builder()
                .blobStore(store)
                .endpoint(endpoint)
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
                .build();
        proxy.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!"STARTED".equals(proxy.getState())) {
            if (System.nanoTime() > deadline) {
                proxy.stop();
                throw new IllegalStateException("S3Proxy did not start on " + endpoint);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        return new EmbeddedS3(proxy, store, endpoint);
    }

    /** The index-service's {@code quarkus.s3.*} system properties for an S3 endpoint with these credentials. */
    public static List<String> quarkusClientArgs(URI endpoint) {
        return List.of(
                "-Dquarkus.s3.endpoint-override=" + endpoint,
                "-Dquarkus.s3.path-style-access=true",
                "-Dquarkus.s3.aws.region=" + REGION,
                "-Dquarkus.s3.aws.credentials.type=static",
                "-Dquarkus.s3.aws.credentials.static-provider.access-key-id=" + ACCESS_KEY,
                "-Dquarkus.s3.aws.credentials.static-provider.secret-access-key=" + SECRET_KEY);
    }

    public URI endpoint() {
        return endpoint;
    }

    public void createBucket(String bucket) {
        if (!blobStore.containerExists(bucket)) {
            blobStore.createContainer(bucket);
        }
    }

    @Override
    public void close() {
        try {
            proxy.stop();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop S3Proxy", e);
        }
    }
}
