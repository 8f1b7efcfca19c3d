package io.tierlog.testkit;

import java.io.InputStream;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.blobstore.ForwardingBlobStore;
import org.gaul.s3proxy.nio2blob.TransientNio2BlobStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * An embedded S3Proxy speaking the real S3 protocol on 127.0.0.1, backed by an in-memory blob store that
 * outlives restarts. {@link #stop()} then {@link #start()} brings the server back on the <em>same port</em>
 * with the same objects, so a test can take "S3" down under a client and watch it recover.
 *
 * <p>Requests must be signed (SigV4) with {@link #ACCESS_KEY}/{@link #SECRET_KEY}, region {@link #REGION},
 * path-style addressing. Not thread-safe for concurrent start/stop; serve requests from any thread.
 */
public final class S3ProxyServer implements AutoCloseable {

    public static final String ACCESS_KEY = "tierlog-test-access";
    public static final String SECRET_KEY = "tierlog-test-secret";
    public static final String REGION = "us-east-1";

    private static final Logger LOG = LoggerFactory.getLogger(S3ProxyServer.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);

    private final BlobStore blobStore = new TransientNio2BlobStore();
    private final List<RangedGet> rangedGets = new CopyOnWriteArrayList<>();
    private final Set<String> keysStored = ConcurrentHashMap.newKeySet();
    private final AtomicLong keysStoredAgain = new AtomicLong();
    private S3Proxy proxy;
    private int port; // 0 until the first start picks a free port; then fixed

    /** Starts a new server on a free port. */
    public static S3ProxyServer started() {
        S3ProxyServer server = new S3ProxyServer();
        server.start();
        return server;
    }

    /** Starts the server: on a free port the first time, on the same port as before after {@link #stop()}. */
    public synchronized S3ProxyServer start() {
        if (proxy != null) {
            throw new IllegalStateException("already running on port " + port);
        }
        S3Proxy candidate = S3Proxy.builder()
                .blobStore(new RecordingBlobStore(blobStore))
                .endpoint(URI.create("http://127.0.0.1:" + port))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
                // Fail fast on stop: pending requests are aborted as in a real outage.
                .stopTimeout(0)
                .build();
        try {
            candidate.start();
            long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
            while (!"STARTED".equals(candidate.getState())) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("S3Proxy did not start within " + START_TIMEOUT);
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
        } catch (RuntimeException e) {
            stopQuietly(candidate);
            throw e;
        } catch (Exception e) {
            stopQuietly(candidate);
            throw new IllegalStateException("cannot start S3Proxy on port " + port, e);
        }
        proxy = candidate;
        port = candidate.getPort();
        return this;
    }

    /** Stops the server; objects are kept for the next {@link #start()}. Idempotent. */
    public synchronized void stop() {
        if (proxy != null) {
            try {
                proxy.stop();
            } catch (Exception e) {
                throw new IllegalStateException("cannot stop S3Proxy", e);
            } finally {
                proxy = null;
            }
        }
    }

    public synchronized boolean isRunning() {
        return proxy != null;
    }

    /** The port; fixed after the first {@link #start()}. */
    public synchronized int port() {
        if (port == 0) {
            throw new IllegalStateException("not started yet");
        }
        return port;
    }

    /** {@code http://127.0.0.1:<port>}, for the client's endpoint override (with path-style access). */
    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port());
    }

    /** A GET with a {@code Range} header that the server answered: the object's key and the header's value. */
    public record RangedGet(String key, String range) {
    }

    /** The ranged GETs served since the start or the last {@link #clearRangedGets()}, in the order they came. */
    public List<RangedGet> rangedGets() {
        return List.copyOf(rangedGets);
    }

    public void clearRangedGets() {
        rangedGets.clear();
    }

    /**
     * How many PUTs stored a bucket and key this server had stored before: overwrites, and a client's retries of
     * attempts that were stored although the client saw them fail.
     */
    public long keysStoredAgain() {
        return keysStoredAgain.get();
    }

    /** Creates a bucket directly in the backing store (works while the server is stopped too). */
    public void createBucket(String bucket) {
        if (!blobStore.containerExists(bucket)) {
            blobStore.createContainer(bucket);
        }
    }

    @Override
    public synchronized void close() {
        stop();
        blobStore.close();
    }

    /**
     * Records the ranged GETs S3Proxy serves (each request is one blob-store call) and reports a failed PUT in the
     * store: S3Proxy answers it before reading the body, which a client only sees as a failed write of its request.
     */
    private final class RecordingBlobStore extends ForwardingBlobStore {
        RecordingBlobStore(BlobStore delegate) {
            super(delegate);
        }

        @Override
        public PutObjectResponse putBlob(PutObjectRequest request, InputStream payload) {
            try {
                PutObjectResponse stored = super.putBlob(request, payload);
                if (!keysStored.add(request.bucket() + "/" + request.key())) {
                    keysStoredAgain.incrementAndGet();
                }
                return stored;
            } catch (S3Exception e) {
                if (e.statusCode() != 412) { // a conditional PUT's precondition failing is an answer, not a failure
                    LOG.warn("S3Proxy's store failed a PUT of {} ({} bytes)", request.key(), request.contentLength(), e);
                }
                throw e;
            } catch (RuntimeException e) {
                LOG.warn("S3Proxy's store failed a PUT of {} ({} bytes)", request.key(), request.contentLength(), e);
                throw e;
            }
        }

        @Override
        public ResponseInputStream<GetObjectResponse> getBlob(GetObjectRequest request) {
            if (request.range() != null) {
                rangedGets.add(new RangedGet(request.key(), request.range()));
            }
            return super.getBlob(request);
        }
    }

    private static void stopQuietly(S3Proxy candidate) {
        try {
            candidate.stop();
        } catch (Exception ignored) {
            // already failing; the start error is the one to report
        }
    }
}
