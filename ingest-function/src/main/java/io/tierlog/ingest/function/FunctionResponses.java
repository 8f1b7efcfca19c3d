package io.tierlog.ingest.function;

import io.tierlog.http.ProblemType;
import io.tierlog.http.MediaTypes;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.tierlog.http.ProblemJson;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Builds payload-2.0 responses: JSON bodies as UTF-8 text (never base64), with explicit content types. */
final class FunctionResponses {
    private FunctionResponses() {
    }

    static APIGatewayV2HTTPResponse json(int status, byte[] body) {
        return response(status, Map.of("Content-Type", MediaTypes.JSON), body);
    }

    /**
     * The shared problem+json rendering; a 405 also names the allowed method in {@code Allow}, a 503
     * {@code hot-tier-full} the {@code Retry-After}.
     */
    static APIGatewayV2HTTPResponse problem(TierlogException e) {
        Map<String, String> headers = new java.util.HashMap<>(switch (e.type()) {
            case METHOD_NOT_ALLOWED -> Map.of("Content-Type", ProblemJson.MEDIA_TYPE, "Allow", ProduceRoute.ALLOWED_METHOD);
            case UNAUTHORIZED -> Map.of("Content-Type", ProblemJson.MEDIA_TYPE,
                    "WWW-Authenticate", "Bearer realm=\"tierlog\"");
            case TOO_MANY_FAILURES -> Map.of("Content-Type", ProblemJson.MEDIA_TYPE,
                    "Retry-After", String.valueOf(e.extra().get("retryAfterSeconds")));
            default -> Map.of("Content-Type", ProblemJson.MEDIA_TYPE);
        });
        e.retryAfterSeconds().ifPresent(s -> headers.put("Retry-After", Long.toString(s)));
        return response(ProblemType.of(e.type()).status(), headers, ProblemJson.render(e));
    }

    private static APIGatewayV2HTTPResponse response(int status, Map<String, String> headers, byte[] body) {
        return APIGatewayV2HTTPResponse.builder().withStatusCode(status).withHeaders(headers)
                .withBody(new String(body, StandardCharsets.UTF_8)).withIsBase64Encoded(false).build();
    }
}
