package io.tierlog.ingest.function;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;

/**
 * The Lambda entry point for API Gateway HTTP API (payload format 2.0) produce requests. Handler string:
 * {@code io.tierlog.ingest.function.ApiGatewayIngestHandler::handleRequest}.
 *
 * <p>Lambda builds one instance per execution environment, so the constructor is where the services are built,
 * once, from the environment ({@link ProduceFunction#fromEnvironment}); it opens no file, so an initialised
 * instance can be snapshotted (SnapStart) and restored any number of times. Invocations on one instance are
 * sequential under the standard runtime; {@link ProduceFunction} is thread-safe anyway.
 */
public final class ApiGatewayIngestHandler implements RequestHandler<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> {
    private final ProduceFunction function;

    public ApiGatewayIngestHandler() {
        this(ProduceFunction.fromEnvironment(System.getenv()));
    }

    ApiGatewayIngestHandler(ProduceFunction function) {
        this.function = function;
    }

    @Override
    public APIGatewayV2HTTPResponse handleRequest(APIGatewayV2HTTPEvent event, Context context) {
        return function.handle(event, context.getAwsRequestId());
    }
}
