package io.tierlog.ingest.function;

import io.tierlog.http.ProblemType;
import io.tierlog.http.MediaTypes;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.tierlog.http.ProblemException;
import io.tierlog.http.ProblemJson;
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
        return problem(ProblemType.of(e.type()), e.getMessage(), e.extra());
    }

    /** An edge-only problem (405, 415), answered as {@link #problem(TierlogException)} answers. */
    static APIGatewayV2HTTPResponse problem(ProblemException e) {
        return problem(e.type(), e.getMessage(), e.extra());
    }

    private static APIGatewayV2HTTPResponse problem(ProblemType type, String detail, Map<String, Object> extra) {
        Map<String, String> headers = new java.util.HashMap<>(switch (type) {
            case METHOD_NOT_ALLOWED -> Map.of("Content-Type", ProblemJson.MEDIA_TYPE, "Allow", ProduceRoute.ALLOWED_METHOD);
            case UNAUTHORIZED -> Map.of("Content-Type", ProblemJson.MEDIA_TYPE,
                    "WWW-Authenticate", "Bearer realm=\"tierlog\"");
            case TOO_MANY_FAILURES -> Map.of("Content-Type", ProblemJson.MEDIA_TYPE,
                    "Retry-After", String.valueOf(extra.get("retryAfterSeconds")));
            default -> Map.of("Content-Type", ProblemJson.MEDIA_TYPE);
        });
        if (extra.get(TierlogException.RETRY_AFTER_SECONDS) instanceof Number s) {
            headers.put("Retry-After", Long.toString(s.longValue()));
        }
        return response(type.status(), headers, ProblemJson.render(type, detail, extra));
    }

    private static APIGatewayV2HTTPResponse response(int status, Map<String, String> headers, byte[] body) {
        return APIGatewayV2HTTPResponse.builder().withStatusCode(status).withHeaders(headers)
                .withBody(new String(body, StandardCharsets.UTF_8)).withIsBase64Encoded(false).build();
    }
}
