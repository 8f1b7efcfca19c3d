package io.tierlog.bench.compare;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.ResponseTransformer;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.InputStream;
import java.net.URI;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The raw S3 GET rate: whole-object GETs of the objects under a prefix with N threads, through the AWS SDK v2
 * (the SDK the index-service uses), bytes read and discarded. This is the ceiling a cold replay could reach on
 * this machine and this S3 endpoint, before any decoding, CRC checking or HTTP serving.
 */
public final class S3GetRate {
    private S3GetRate() {
    }

    public record Result(long objects, long bytes, long elapsedNanos, int threads) {
        public double megabytesPerSecond() {
            return bytes / 1e6 / (elapsedNanos / 1e9);
        }

        public double getsPerSecond() {
            return objects / (elapsedNanos / 1e9);
        }
    }

    /** GETs every object under {@code prefix} whose key ends with {@code suffix} (e.g. ".log" for segment bytes). */
    public static Result measure(URI endpoint, String bucket, String prefix, String suffix, int threads) throws Exception {
        try (S3Client s3 = S3Client.builder()
                .endpointOverride(endpoint)
                .forcePathStyle(true)
                .region(Region.of(EmbeddedS3.REGION))
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(EmbeddedS3.ACCESS_KEY, EmbeddedS3.SECRET_KEY)))
                .httpClientBuilder(UrlConnectionHttpClient.builder())
                .build()) {
            List<S3Object> objects = s3.listObjectsV2Paginator(ListObjectsV2Request.builder()
                    .bucket(bucket).prefix(prefix).build()).contents().stream()
                    .filter(o -> o.key().endsWith(suffix)).toList();
            if (objects.isEmpty()) {
                throw new IllegalStateException("no *" + suffix + " objects under s3://" + bucket + "/" + prefix);
            }
            AtomicInteger next = new AtomicInteger();
            AtomicLong bytes = new AtomicLong();
            byte[][] buffers = new byte[threads][1 << 16];
            long elapsed = Workers.runTimed(threads, (worker, start) -> {
                int i;
                while ((i = next.getAndIncrement()) < objects.size()) {
                    try (InputStream in = s3.getObject(GetObjectRequest.builder().bucket(bucket)
                            .key(objects.get(i).key()).build(), ResponseTransformer.toInputStream())) {
                        int n;
                        while ((n = in.read(buffers[worker])) > 0) {
                            bytes.addAndGet(n);
                        }
                    }
                }
            });
            return new Result(objects.size(), bytes.get(), elapsed, threads);
        }
    }
}
