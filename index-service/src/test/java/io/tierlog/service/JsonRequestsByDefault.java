package io.tierlog.service;

import io.quarkus.test.junit.callback.QuarkusTestBeforeEachCallback;
import io.quarkus.test.junit.callback.QuarkusTestMethodContext;
import io.restassured.RestAssured;
import io.restassured.builder.RequestSpecBuilder;
import io.restassured.http.ContentType;

/**
 * Every {@code @QuarkusTest}'s REST Assured requests say {@code Content-Type: application/json} unless the test
 * names another type: JSON endpoints answer 415 to other types or none (api.md), and REST Assured would otherwise
 * send a string body as {@code text/plain}. Registered in META-INF/services, so it applies to every test class.
 */
public class JsonRequestsByDefault implements QuarkusTestBeforeEachCallback {
    @Override
    public void beforeEach(QuarkusTestMethodContext context) {
        RestAssured.requestSpecification = new RequestSpecBuilder().setContentType(ContentType.JSON).build();
    }
}
