package io.tierlog.service;

import io.quarkus.test.junit.callback.QuarkusTestBeforeEachCallback;
import io.quarkus.test.junit.callback.QuarkusTestMethodContext;
import io.restassured.RestAssured;
import io.restassured.filter.Filter;
import io.restassured.http.ContentType;

/**
 * Every {@code @QuarkusTest}'s REST Assured request with a body says {@code Content-Type: application/json} unless
 * the test names another type (tests that send text/plain or octet-stream use the JDK's HttpClient): JSON endpoints answer 415 to other types or none (api.md), and REST Assured would
 * otherwise send a string body as {@code text/plain}. Registered in META-INF/services, so it applies to every test
 * class; it adds one filter to REST Assured's static list, once.
 */
public class JsonRequestsByDefault implements QuarkusTestBeforeEachCallback {
    private static final Filter JSON_BODIES = (request, response, ctx) -> {
        // REST Assured reports its own defaults (text/plain for a string, application/octet-stream for bytes) when
        // the test set none
        String type = request.getContentType();
        if (request.getBody() != null && (type == null || type.isEmpty() || type.startsWith("text/plain")
                || type.startsWith("application/octet-stream"))) {
            request.contentType(ContentType.JSON);
        }
        return ctx.next(request, response);
    };

    @Override
    public void beforeEach(QuarkusTestMethodContext context) {
        if (!RestAssured.filters().contains(JSON_BODIES)) {
            RestAssured.filters(JSON_BODIES);
        }
    }
}
