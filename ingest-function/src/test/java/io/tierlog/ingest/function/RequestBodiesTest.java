package io.tierlog.ingest.function;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RequestBodiesTest {
    private final RequestBodies bodies = new RequestBodies(10);

    @Test
    void base64LengthIsExactForEveryPadding() {
        for (int n = 0; n < 40; n++) {
            String encoded = Base64.getEncoder().encodeToString(new byte[n]);
            assertThat(RequestBodies.base64DecodedLength(encoded)).as("n=%d", n).isEqualTo(n);
        }
    }

    @Test
    void acceptsABodyAtTheLimitAndRejectsOneByteMore() {
        assertThat(bodies.decode(event("0123456789", false))).hasSize(10);
        assertThat(bodies.decode(event(Base64.getEncoder().encodeToString(new byte[10]), true))).hasSize(10);
        assertThatThrownBy(() -> bodies.decode(event("0123456789a", false)))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.REQUEST_TOO_LARGE));
        // Six chars but thirteen UTF-8 bytes: the limit is on bytes.
        assertThatThrownBy(() -> bodies.decode(event("ééééé\u20ac", false)))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.REQUEST_TOO_LARGE));
        assertThatThrownBy(() -> bodies.decode(event(Base64.getEncoder().encodeToString(new byte[11]), true)))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.REQUEST_TOO_LARGE));
    }

    @Test
    void decodesBase64AndNamesTheBodyWhenItIsNot() {
        assertThat(new String(bodies.decode(event("eyJhIjoxfQ==", true)), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
        assertThatThrownBy(() -> bodies.decode(event("e!J=", true))).isInstanceOfSatisfying(TierlogException.class, e -> {
            assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
            assertThat(e.extra()).containsEntry("field", "body");
        });
        assertThat(bodies.decode(event(null, false))).isEmpty();
    }

    @Test
    void acceptsJsonMediaTypesOnly() {
        bodies.requireJson(null);
        bodies.requireJson(Map.of("content-type", "application/json; charset=utf-8"));
        bodies.requireJson(Map.of("Content-Type", "application/vnd.tierlog+json"));
        assertThatThrownBy(() -> bodies.requireJson(Map.of("content-type", "text/plain")))
                .isInstanceOfSatisfying(TierlogException.class,
                        e -> assertThat(e.type()).isEqualTo(ErrorType.UNSUPPORTED_MEDIA_TYPE));
    }

    private static APIGatewayV2HTTPEvent event(String body, boolean base64) {
        return APIGatewayV2HTTPEvent.builder().withBody(body).withIsBase64Encoded(base64).build();
    }
}
