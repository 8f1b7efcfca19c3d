package io.tierlog.objectstore.s3;

import io.tierlog.testkit.S3ProxyServer;
import java.net.URI;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;

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
                .serviceConfiguration(S3Configuration.builder().chunkedEncodingEnabled(false).build())
                .httpClient(UrlConnectionHttpClient.create())
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .overrideConfiguration(o -> {
                    o.addExecutionInterceptor(new NoExpectContinueInterceptor());
                    for (ExecutionInterceptor interceptor : interceptors) {
                        o.addExecutionInterceptor(interceptor);
                    }
                })
                .build();
    }
}
