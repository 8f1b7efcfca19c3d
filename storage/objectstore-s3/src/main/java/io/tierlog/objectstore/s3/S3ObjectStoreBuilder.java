package io.tierlog.objectstore.s3;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.S3Configuration;

/**
 * Builds an {@link S3ObjectStore} together with the {@link S3Client} it owns, for plain use (tools, tests, the
 * ingest function). The Quarkus app instead passes the client quarkus-amazon-s3 built to the constructor.
 *
 * <p>Defaults are the SDK's (region and credentials from the environment; 3 attempts with jittered backoff)
 * except for checksums: the store sends its own CRC32C on every upload, so the SDK is told to add checksums only
 * where an operation requires one ({@code WHEN_REQUIRED}) instead of streaming a second, trailing one; and for
 * payload signing: over an {@code http://} endpoint (LocalStack, MinIO, S3Proxy) the SDK would send each upload
 * aws-chunked, a few bytes per socket write, and a server that answers once it has decoded the last chunk closes
 * the connection before the final CRLF arrives, failing the attempt it has already stored (5-10% of PUTs against
 * S3Proxy, each then sent again). Bodies are in memory, so signing the whole payload costs one SHA-256 pass.
 */
public final class S3ObjectStoreBuilder {

    private String bucket;
    private String keyPrefix = "";
    private URI endpoint;
    private String region;
    private boolean pathStyle;
    private AwsCredentialsProvider credentials;
    private int partSize = S3ObjectStore.DEFAULT_PART_SIZE;
    private Integer maxAttempts;
    private Duration backoffBase = Duration.ofMillis(100);
    private Duration connectTimeout = Duration.ofSeconds(2);
    private Duration socketTimeout = Duration.ofSeconds(30);
    private Duration apiCallTimeout;

    S3ObjectStoreBuilder() {
    }

    public S3ObjectStoreBuilder bucket(String bucket) {
        this.bucket = bucket;
        return this;
    }

    /** Keys are stored under this prefix ("" by default); a '/' is appended if missing. */
    public S3ObjectStoreBuilder keyPrefix(String keyPrefix) {
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        return this;
    }

    /** An S3-compatible endpoint (LocalStack, S3Proxy, MinIO); AWS's regional endpoint if unset. */
    public S3ObjectStoreBuilder endpointOverride(URI endpoint) {
        this.endpoint = endpoint;
        return this;
    }

    public S3ObjectStoreBuilder region(String region) {
        this.region = region;
        return this;
    }

    /** Path-style addressing ({@code host/bucket/key}), which local S3 emulators need. */
    public S3ObjectStoreBuilder pathStyle(boolean pathStyle) {
        this.pathStyle = pathStyle;
        return this;
    }

    public S3ObjectStoreBuilder credentials(String accessKeyId, String secretAccessKey) {
        this.credentials = StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKeyId, secretAccessKey));
        return this;
    }

    /** Multipart threshold and part size, at least 5 MiB; 8 MiB by default. */
    public S3ObjectStoreBuilder partSize(int partSize) {
        this.partSize = partSize;
        return this;
    }

    /** Total attempts per request, first included (SDK default 3). Tests lower it to fail fast. */
    public S3ObjectStoreBuilder maxAttempts(int maxAttempts) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1: " + maxAttempts);
        }
        this.maxAttempts = maxAttempts;
        return this;
    }

    /** Base delay of the exponential backoff between attempts, also after throttling (100 ms by default). */
    public S3ObjectStoreBuilder backoffBase(Duration backoffBase) {
        this.backoffBase = Objects.requireNonNull(backoffBase, "backoffBase");
        return this;
    }

    public S3ObjectStoreBuilder connectTimeout(Duration connectTimeout) {
        this.connectTimeout = Objects.requireNonNull(connectTimeout, "connectTimeout");
        return this;
    }

    /** Longest wait for a response byte; bounds how long a stalled transfer blocks a caller. */
    public S3ObjectStoreBuilder socketTimeout(Duration socketTimeout) {
        this.socketTimeout = Objects.requireNonNull(socketTimeout, "socketTimeout");
        return this;
    }

    /** Upper bound for a whole call, retries included; none by default. */
    public S3ObjectStoreBuilder apiCallTimeout(Duration apiCallTimeout) {
        this.apiCallTimeout = apiCallTimeout;
        return this;
    }

    /** Builds the client and a store that owns (and will close) it. */
    public S3ObjectStore build() {
        S3ClientBuilder builder = S3Client.builder()
                .httpClient(UrlConnectionHttpClient.builder()
                        .connectionTimeout(connectTimeout)
                        .socketTimeout(socketTimeout)
                        .build())
                .forcePathStyle(pathStyle)
                .serviceConfiguration(S3Configuration.builder().chunkedEncodingEnabled(false).build())
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .credentialsProvider(credentials != null ? credentials : DefaultCredentialsProvider.builder().build())
                .overrideConfiguration(o -> {
                    o.addExecutionInterceptor(new NoExpectContinueInterceptor());
                    var retry = AwsRetryStrategy.standardRetryStrategy().toBuilder()
                            .backoffStrategy(BackoffStrategy.exponentialDelay(backoffBase, Duration.ofSeconds(5)))
                            .throttlingBackoffStrategy(
                                    BackoffStrategy.exponentialDelay(backoffBase, Duration.ofSeconds(5)));
                    if (maxAttempts != null) {
                        retry.maxAttempts(maxAttempts);
                    }
                    o.retryStrategy(retry.build());
                    if (apiCallTimeout != null) {
                        o.apiCallTimeout(apiCallTimeout);
                    }
                });
        if (endpoint != null) {
            builder.endpointOverride(endpoint);
        }
        if (region != null) {
            builder.region(Region.of(region));
        }
        S3Client client = builder.build();
        try {
            return new S3ObjectStore(client, bucket, keyPrefix, partSize, true);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }
}
