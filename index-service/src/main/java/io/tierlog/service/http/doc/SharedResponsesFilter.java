package io.tierlog.service.http.doc;

import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

import java.util.Map;

/**
 * Adds the answers every {@code /v1} operation can give, whatever its resource does, to each of them in
 * {@code /q/openapi}: 401 and 403 (the access filter, token mode), 429 (failed-authentication limit and byte-rate
 * quotas), 503 (shutdown, hot-tier backpressure) and, for operations with a body, 415. They run before any resource,
 * so declaring them once here keeps the annotations to what an operation itself answers. A status an operation
 * already documents is left as it is. Registered with {@code mp.openapi.filter}.
 */
public class SharedResponsesFilter implements OASFilter {
    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        if (openAPI.getPaths() == null || openAPI.getPaths().getPathItems() == null) {
            return;
        }
        for (Map.Entry<String, PathItem> path : openAPI.getPaths().getPathItems().entrySet()) {
            if (!path.getKey().equals("/v1") && !path.getKey().startsWith("/v1/")) {
                continue;
            }
            Map<PathItem.HttpMethod, Operation> ops = path.getValue().getOperations();
            if (ops == null) {
                continue;
            }
            for (Map.Entry<PathItem.HttpMethod, Operation> op : ops.entrySet()) {
                APIResponses responses = op.getValue().getResponses();
                if (responses == null) {
                    responses = OASFactory.createAPIResponses();
                    op.getValue().setResponses(responses);
                }
                add(responses, "401", ProblemResponses.UNAUTHORIZED);
                add(responses, "403", ProblemResponses.FORBIDDEN);
                add(responses, "429", ProblemResponses.TOO_MANY_REQUESTS);
                add(responses, "503", ProblemResponses.SERVICE_UNAVAILABLE);
                PathItem.HttpMethod m = op.getKey();
                if (m == PathItem.HttpMethod.POST || m == PathItem.HttpMethod.PUT || m == PathItem.HttpMethod.PATCH) {
                    add(responses, "415", ProblemResponses.UNSUPPORTED_MEDIA_TYPE);
                }
            }
        }
    }

    private static void add(APIResponses responses, String status, String component) {
        if (!responses.hasAPIResponse(status)) {
            responses.addAPIResponse(status, OASFactory.createAPIResponse().ref(component));
        }
    }
}
