package io.tierlog.ingest.function;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import io.tierlog.http.ProblemException;
import io.tierlog.http.ProblemType;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
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
    void tellsJsonFromRecordBatchesAndRefusesOtherMediaTypes() {
        // no Content-Type at all is refused, as the index-service refuses it (a browser may send such a body
        // cross-origin unasked); Accept does not choose the request format
        for (Map<String, String> untyped : java.util.Arrays.asList(null, Map.of("accept",
                "application/vnd.tierlog.record-batches"))) {
            assertThatThrownBy(() -> bodies.formatOf(untyped)).isInstanceOfSatisfying(ProblemException.class,
                    e -> assertThat(e.type()).isEqualTo(ProblemType.UNSUPPORTED_MEDIA_TYPE));
        }
        assertThat(bodies.formatOf(Map.of("content-type", "application/json; charset=utf-8"))).isEqualTo(RequestBodies.Format.JSON);
        assertThat(bodies.formatOf(Map.of("Content-Type", "application/vnd.tierlog+json"))).isEqualTo(RequestBodies.Format.JSON);
        assertThat(bodies.formatOf(Map.of("content-type", "application/vnd.tierlog.record-batches")))
                .isEqualTo(RequestBodies.Format.RECORD_BATCHES);
        assertThat(bodies.formatOf(Map.of("CONTENT-TYPE", " Application/VND.Tierlog.Record-Batches ; v=2")))
                .isEqualTo(RequestBodies.Format.RECORD_BATCHES);
        for (String other : new String[]{"text/plain", "application/octet-stream", "application/vnd.tierlog.record-batch",
                "application/vnd.tierlog.record-batches-x"}) {
            assertThatThrownBy(() -> bodies.formatOf(Map.of("content-type", other))).as(other)
                    .isInstanceOfSatisfying(ProblemException.class, e -> {
                        assertThat(e.type()).isEqualTo(ProblemType.UNSUPPORTED_MEDIA_TYPE);
                        assertThat(e.extra()).containsEntry("field", "Content-Type");
                    });
        }
    }

    @Test
    void aBinaryBodyIsDecodedFromBase64ExactlyWithEveryByteValue() {
        RequestBodies wide = new RequestBodies(256);
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        ByteBuffer decoded = wide.decodeBinary(event(Base64.getEncoder().encodeToString(all), true));
        byte[] got = new byte[decoded.remaining()];
        decoded.get(got);
        assertThat(got).isEqualTo(all);
        assertThat(bodies.decodeBinary(event(null, false)).remaining()).isZero();
        assertThat(bodies.decodeBinary(event("", true)).remaining()).isZero();
    }

    @Test
    void aBinaryBodyOverTheLimitIs413BeforeDecodingAndBadBase64NamesTheBody() {
        assertThat(bodies.decodeBinary(event(Base64.getEncoder().encodeToString(new byte[10]), true)).remaining())
                .isEqualTo(10);
        assertThatThrownBy(() -> bodies.decodeBinary(event(Base64.getEncoder().encodeToString(new byte[11]), true)))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.REQUEST_TOO_LARGE));
        assertThatThrownBy(() -> bodies.decodeBinary(event("e!J=", true))).isInstanceOfSatisfying(TierlogException.class, e -> {
            assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
            assertThat(e.extra()).containsEntry("field", "body");
        });
    }

    @Test
    void aBinaryBodyNotMarkedBase64IsRefusedEvenWhenItLooksLikeBytes() {
        // Plain ASCII, so its UTF-8 encoding would be unambiguous here; refused anyway, since the function cannot
        // tell such a body from one whose non-UTF-8 bytes were replaced on the way in.
        for (String text : new String[]{"AAAA", "\u0000\u0002", "\ufffd"}) {
            assertThatThrownBy(() -> bodies.decodeBinary(event(text, false))).as(text)
                    .isInstanceOfSatisfying(TierlogException.class, e -> {
                        assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
                        assertThat(e.extra()).containsEntry("field", "body");
                        assertThat(e.getMessage()).contains("isBase64Encoded");
                    });
        }
    }

    private static APIGatewayV2HTTPEvent event(String body, boolean base64) {
        return APIGatewayV2HTTPEvent.builder().withBody(body).withIsBase64Encoded(base64).build();
    }
}
