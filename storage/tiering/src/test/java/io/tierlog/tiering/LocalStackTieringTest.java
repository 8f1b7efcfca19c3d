package io.tierlog.tiering;

import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.s3.S3ObjectStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.localstack.LocalStackContainer;
import org.testcontainers.utility.DockerImageName;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The tiering contract against LocalStack's S3; skipped where Docker is not available. */
class LocalStackTieringTest extends TieredStorageContractTest {
    private static final AtomicInteger BUCKETS = new AtomicInteger();
    private static LocalStackContainer localstack;
    private String bucket;

    @BeforeAll
    static void startLocalStack() {
        boolean docker;
        try {
            docker = DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            docker = false;
        }
        assumeTrue(docker, "Docker is not available: LocalStack variant skipped");
        localstack = new LocalStackContainer(DockerImageName.parse("localstack/localstack:4.4")).withServices("s3");
        localstack.start();
    }

    @AfterAll
    static void stopLocalStack() {
        if (localstack != null) {
            localstack.stop();
        }
    }

    @Override
    protected ObjectStore openStore() {
        if (bucket == null) {
            bucket = "tiering-" + BUCKETS.incrementAndGet();
            try (S3Client admin = S3Client.builder().endpointOverride(localstack.getEndpoint())
                    .region(Region.of(localstack.getRegion())).forcePathStyle(true)
                    .httpClient(UrlConnectionHttpClient.create())
                    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                            localstack.getAccessKey(), localstack.getSecretKey())))
                    .build()) {
                admin.createBucket(b -> b.bucket(bucket));
            }
        }
        return S3ObjectStore.builder()
                .endpointOverride(localstack.getEndpoint())
                .region(localstack.getRegion())
                .credentials(localstack.getAccessKey(), localstack.getSecretKey())
                .pathStyle(true)
                .bucket(bucket)
                .build();
    }
}
