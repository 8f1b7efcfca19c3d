package io.tierlog.ingest.function;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import io.tierlog.http.ProblemException;
import io.tierlog.http.ProblemType;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProduceRouteTest {
    private static APIGatewayV2HTTPEvent event(String method, String rawPath, String stage, Map<String, String> params) {
        return APIGatewayV2HTTPEvent.builder().withRawPath(rawPath).withPathParameters(params)
                .withRequestContext(APIGatewayV2HTTPEvent.RequestContext.builder().withStage(stage)
                        .withHttp(APIGatewayV2HTTPEvent.RequestContext.Http.builder().withMethod(method).withPath(rawPath).build())
                        .build())
                .build();
    }

    @Test
    void takesTheTopicFromPathParametersOrTheDecodedPath() {
        assertThat(ProduceRoute.topicOf(event("POST", "/v1/topics/orders/records", "$default", Map.of("topic", "orders"))))
                .isEqualTo("orders");
        assertThat(ProduceRoute.topicOf(event("POST", "/v1/topics/a.b_c-9/records", "$default", null))).isEqualTo("a.b_c-9");
    }

    @Test
    void stripsANamedStagePrefix() {
        assertThat(ProduceRoute.topicOf(event("POST", "/prod/v1/topics/orders/records", "prod", null))).isEqualTo("orders");
        assertThat(type(() -> ProduceRoute.topicOf(event("POST", "/other/v1/topics/orders/records", "prod", null))))
                .isEqualTo(ProblemType.NOT_FOUND);
    }

    @Test
    void anEncodedDotDotIsAnInvalidTopicNotAPathEscape() {
        assertThat(type(() -> ProduceRoute.topicOf(event("POST", "/v1/topics/%2e%2e/records", "$default", null))))
                .isEqualTo(ProblemType.INVALID_TOPIC);
        assertThat(type(() -> ProduceRoute.topicOf(event("POST", "/v1/topics/a%2Fb/records", "$default", null))))
                .isEqualTo(ProblemType.INVALID_TOPIC);
    }

    @Test
    void otherPathsAreNotFoundAndOtherMethodsNotAllowed() {
        assertThat(type(() -> ProduceRoute.topicOf(event("POST", "/v1/topics/orders/records/x", "$default", null))))
                .isEqualTo(ProblemType.NOT_FOUND);
        assertThat(type(() -> ProduceRoute.topicOf(event("POST", "/v1/topics//records", "$default", null))))
                .isEqualTo(ProblemType.NOT_FOUND);
        assertThat(type(() -> ProduceRoute.topicOf(event("PUT", "/v1/topics/orders/records", "$default", null))))
                .isEqualTo(ProblemType.METHOD_NOT_ALLOWED);
    }

    @Test
    void aBinaryProduceTakesItsPartitionFromTheQuery() {
        assertThat(ProduceRoute.partitionOf(query(Map.of("partition", "0")))).isZero();
        assertThat(ProduceRoute.partitionOf(query(Map.of("partition", " 7 ", "other", "x")))).isEqualTo(7);
        assertThat(ProduceRoute.partitionOf(query(Map.of("partition", "2147483647")))).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void aMissingOrMalformedPartitionIsABadRequestNamingIt() {
        java.util.List<Map<String, String>> bad = java.util.List.of(Map.of(), Map.of("partition", ""),
                Map.of("Partition", "1"), Map.of("partition", "one"), Map.of("partition", "-1"),
                Map.of("partition", "2147483648"), Map.of("partition", "1,2"), Map.of("partition", "1.0"));
        for (Map<String, String> q : bad) {
            assertThatThrownBy(() -> ProduceRoute.partitionOf(query(q))).as(q.toString())
                    .isInstanceOfSatisfying(TierlogException.class, e -> {
                        assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
                        assertThat(e.extra()).containsEntry("field", "partition");
                    });
        }
        assertThatThrownBy(() -> ProduceRoute.partitionOf(query(null)))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.extra()).containsEntry("field", "partition"));
    }

    private static APIGatewayV2HTTPEvent query(Map<String, String> params) {
        APIGatewayV2HTTPEvent e = event("POST", "/v1/topics/orders/records", "$default", null);
        e.setQueryStringParameters(params);
        return e;
    }

    /** The problem type a request is answered with: an engine kind's, or an edge-only one. */
    private static ProblemType type(Runnable r) {
        try {
            r.run();
        } catch (TierlogException e) {
            return ProblemType.of(e.type());
        } catch (ProblemException e) {
            return e.type();
        }
        throw new AssertionError("no error raised");
    }
}
