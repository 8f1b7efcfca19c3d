package io.tierlog.objectstore.s3;

import io.tierlog.testkit.S3ProxyServer;
import java.net.URI;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Raw S3 clients for tests, configured as the Quarkus app's would be: SDK defaults (including its default
 * trailing-checksum settings), path style, and the {@link NoExpectContinueInterceptor} the app registers.
 */
final class TestClients {

    private TestClients() {
    }

    static S3Client forS3Proxy(S3ProxyServer server, ExecutionInterceptor... interceptors) {
        return create(server.endpoint(), S3ProxyServer.REGION, S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY,
                interceptors);
    }

    static S3Client create(URI endpoint, String region, String accessKey, String secretKey,
            ExecutionInterceptor... interceptors) {
        return S3Client.builder()
                .endpointOverride(endpoint)
                .region(Region.of(region))
                .forcePathStyle(true)
                .httpClient(UrlConnectionHttpClient.create())
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .overrideConfiguration(o -> {
                    o.addExecutionInterceptor(new NoExpectContinueInterceptor());
                    // The JDK pools keep-alive connections JVM-wide (up to 5 per host) and each failed attempt spends
                    // one that S3Proxy closed meanwhile: a full suite once failed a PUT on all 4 default attempts.
                    o.retryStrategy(AwsRetryStrategy.standardRetryStrategy().toBuilder().maxAttempts(6).build());
                    for (ExecutionInterceptor interceptor : interceptors) {
                        o.addExecutionInterceptor(interceptor);
                    }
                })
                .build();
    }
}
