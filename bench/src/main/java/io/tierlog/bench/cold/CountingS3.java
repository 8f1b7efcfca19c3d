package io.tierlog.bench.cold;

import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.Ports;
import org.gaul.s3proxy.AccessGrant;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.blobstore.ForwardingBlobStore;
import org.gaul.s3proxy.blobstore.domain.MultipartUpload;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectResponse;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadBucketRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The S3 of the {@code cold} and {@code compaction} benchmarks: an S3Proxy 4.1.0 inside the benchmark JVM on 127.0.0.1, storing
 * objects as files under a directory (like {@link EmbeddedS3}, same credentials), that also <em>counts the S3
 * requests it serves</em>:
 * <ul>
 *   <li>the total, exactly: S3Proxy asks its {@code BlobStoreLocator} once for every signed request, so the
 *   locator counts them (retries by a client are requests too);</li>
 *   <li>a breakdown by blob-store call (GET vs ranged GET, PUT, HEAD, LIST, DELETE, multipart steps), from a
 *   decorator of the blob store. S3Proxy may serve one request with more than one call (a conditional PUT may
 *   HEAD first), so the breakdown explains the total rather than adding up to it.</li>
 * </ul>
 * S3Proxy 4.1.0's own metrics (OpenTelemetry 1.65) cannot be used here: the Quarkus BOM the bench inherits pins
 * OpenTelemetry 1.57, whose Prometheus reader lacks the method S3Proxy calls. Thread-safe.
 */
public final class CountingS3 implements AutoCloseable {
    private final S3Proxy proxy;
    private final BlobStore blobStore;
    private final URI endpoint;
    private final AtomicLong requests = new AtomicLong();
    private final Map<String, LongAdder> calls = new ConcurrentHashMap<>();

    private CountingS3(Path dir) throws Exception {
        Files.createDirectories(dir);
        blobStore = new FilesystemNio2BlobStore(dir.toAbsolutePath().toString());
        endpoint = URI.create("http://127.0.0.1:" + Ports.freeLoopbackPort());
        proxy = S3Proxy.builder()
                .blobStore(blobStore)
                .endpoint(endpoint)
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, EmbeddedS3.ACCESS_KEY, EmbeddedS3.SECRET_KEY)
                .build();
        BlobStore counted = new CountingBlobStore(blobStore);
        proxy.setBlobStoreLocator((identity, container, blob) -> {
            requests.incrementAndGet();
            return EmbeddedS3.ACCESS_KEY.equals(identity) ? new AccessGrant(EmbeddedS3.SECRET_KEY, counted) : null;
        });
    }

    public static CountingS3 start(Path dir) throws Exception {
        CountingS3 s3 = new CountingS3(dir);
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

    public URI endpoint() {
        return endpoint;
    }

    public void createBucket(String bucket) {
        if (!blobStore.containerExists(bucket)) {
            blobStore.createContainer(bucket);
        }
    }

    /** The requests and calls counted since the last {@link #reset()} (or the start). */
    public Counts counts() {
        Map<String, Long> byCall = new TreeMap<>();
        calls.forEach((k, v) -> byCall.put(k, v.sum()));
        return new Counts(requests.get(), byCall);
    }

    /** Starts counting from zero. Requests in flight at the call may land on either side. */
    public void reset() {
        requests.set(0);
        calls.clear();
    }

    /** S3 requests served, and the blob-store calls they made by kind. */
    public record Counts(long requests, Map<String, Long> calls) {
        /** {@code n} per GiB of {@code bytes}, rounded. */
        static long perGib(long n, long bytes) {
            return Math.round(n / (bytes / (double) (1L << 30)));
        }

        String perGibText(long bytes) {
            StringBuilder sb = new StringBuilder().append(perGib(requests, bytes));
            if (!calls.isEmpty()) {
                sb.append(" (");
                String sep = "";
                for (Map.Entry<String, Long> e : calls.entrySet()) {
                    sb.append(sep).append(e.getKey()).append(' ').append(perGib(e.getValue(), bytes));
                    sep = ", ";
                }
                sb.append(')');
            }
            return sb.toString();
        }
    }

    private void count(String call) {
        calls.computeIfAbsent(call, c -> new LongAdder()).increment();
    }

    @Override
    public void close() throws Exception {
        proxy.stop();
    }

    /** Counts the blob-store calls S3Proxy makes on behalf of requests; forwards everything. */
    private final class CountingBlobStore extends ForwardingBlobStore {
        CountingBlobStore(BlobStore delegate) {
            super(delegate);
        }

        @Override
        public ResponseInputStream<GetObjectResponse> getBlob(GetObjectRequest request) {
            count(request.range() == null ? "GET" : "GET range");
            return super.getBlob(request);
        }

        @Override
        public PutObjectResponse putBlob(PutObjectRequest request, InputStream in) {
            count("PUT");
            return super.putBlob(request, in);
        }

        @Override
        public HeadObjectResponse blobMetadata(HeadObjectRequest request) {
            count("HEAD");
            return super.blobMetadata(request);
        }

        @Override
        public ListObjectsV2Response list(ListObjectsV2Request request) {
            count("LIST");
            return super.list(request);
        }

        @Override
        public DeleteObjectResponse removeBlob(DeleteObjectRequest request) {
            count("DELETE");
            return super.removeBlob(request);
        }

        @Override
        public MultipartUpload initiateMultipartUpload(CreateMultipartUploadRequest request) {
            count("multipart create");
            return super.initiateMultipartUpload(request);
        }

        @Override
        public UploadPartResponse uploadMultipartPart(MultipartUpload upload, UploadPartRequest request,
                                                      InputStream in) {
            count("multipart part");
            return super.uploadMultipartPart(upload, request, in);
        }

        @Override
        public CompleteMultipartUploadResponse completeMultipartUpload(MultipartUpload upload,
                                                                       CompleteMultipartUploadRequest request) {
            count("multipart complete");
            return super.completeMultipartUpload(upload, request);
        }

        @Override
        public software.amazon.awssdk.services.s3.model.HeadBucketResponse headBucket(HeadBucketRequest request) {
            count("HEAD bucket");
            return super.headBucket(request);
        }
    }
}
