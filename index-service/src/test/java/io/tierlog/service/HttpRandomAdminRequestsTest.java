package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

import java.net.http.HttpRequest;

/**
 * {@link HttpRandomRequestsTest}'s rounds in token mode as the bootstrap token ({@code admin:cluster}): the token
 * routes and internal topics get past the access check. In a data directory of its own ({@link AdminRoundsProfile}).
 */
@QuarkusTest
@TestProfile(AdminRoundsProfile.class)
class HttpRandomAdminRequestsTest extends HttpRandomRequestsTest {
    @Override
    HttpRequest.Builder authorized(HttpRequest.Builder request) {
        return request.header("Authorization", "Bearer " + AdminRoundsProfile.BOOTSTRAP);
    }
}
