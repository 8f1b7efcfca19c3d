package io.tierlog.objectstore.s3;

import io.tierlog.objectstore.ObjectStore;
import io.tierlog.testkit.ObjectStoreContractTest;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.localstack.LocalStackContainer;
import org.testcontainers.utility.DockerImageName;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The contract against LocalStack's S3, the closest local stand-in for AWS (conditional writes, atomic
 * overwrites, real multipart). Disabled, not failed, where Docker is absent.
 */
@Testcontainers(disabledWithoutDocker = true)
class S3ObjectStoreLocalStackTest extends ObjectStoreContractTest {

    private static final String BUCKET = "tierlog-localstack";
    private static final AtomicInteger RUNS = new AtomicInteger();

    // Pinned: LocalStack's "latest" changes S3 behaviour (and licensing) under us.
    @Container
    private static final LocalStackContainer LOCALSTACK =
            new LocalStackContainer(DockerImageName.parse("localstack/localstack:4.4.0")).withServices("s3");

    private static S3Client client;

    @BeforeAll
    static void createBucket() {
        client = TestClients.create(LOCALSTACK.getEndpoint(), LOCALSTACK.getRegion(), LOCALSTACK.getAccessKey(),
                LOCALSTACK.getSecretKey());
        client.createBucket(b -> b.bucket(BUCKET));
    }

    @AfterAll
    static void closeClient() {
        if (client != null) {
            client.close();
        }
    }

    @Override
    protected ObjectStore createStore() {
        return new S3ObjectStore(client, BUCKET, "run-" + RUNS.incrementAndGet(), S3ObjectStore.MIN_PART_SIZE);
    }
}
