package io.tierlog.objectstore.s3;

import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.SdkHttpRequest;

/**
 * Removes the {@code Expect: 100-continue} header the SDK adds to PutObject/UploadPart.
 *
 * <p>Why: with the url-connection HTTP client, the JDK's HttpURLConnection handles the 100-continue handshake
 * inside {@code getOutputStream()}; when it lands on a keep-alive connection the server has meanwhile closed,
 * the resulting "Unexpected end of file from server" reaches the SDK as an {@link java.io.UncheckedIOException},
 * which the SDK's retry strategy does not retry. Without the header the same stale connection fails in the
 * response read, as an ordinary I/O error the SDK retries. The cost — a rejected upload's body is sent before the
 * rejection arrives — is small for Tierlog's objects (segments up to a part size, manifests of a few KiB).
 *
 * <p>{@link S3ObjectStoreBuilder} installs it; the Quarkus app should too
 * ({@code quarkus.s3.interceptors=io.tierlog.objectstore.s3.NoExpectContinueInterceptor}).
 */
public final class NoExpectContinueInterceptor implements ExecutionInterceptor {

    @Override
    public SdkHttpRequest modifyHttpRequest(Context.ModifyHttpRequest context, ExecutionAttributes attributes) {
        SdkHttpRequest request = context.httpRequest();
        return request.firstMatchingHeader("Expect").isPresent()
                ? request.toBuilder().removeHeader("Expect").build()
                : request;
    }
}
