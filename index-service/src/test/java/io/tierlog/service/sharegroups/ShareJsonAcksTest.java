package io.tierlog.service.sharegroups;

import io.tierlog.log.TierlogException;
import io.tierlog.sharegroups.Ack;
import io.tierlog.sharegroups.AckResult;
import io.tierlog.sharegroups.AckType;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The acks body's streaming fast path reads the usual shape exactly as the tree reading does, and leaves every
 * other body to the tree reading, so a bad body is refused with the same field and detail as before.
 */
class ShareJsonAcksTest {
    @Test
    void theUsualBodyIsReadInOnePassAsTheTreeReadsIt() {
        for (String body : List.of(
                "{\"acks\":[]}",
                "{\"acks\":[{\"lease\":\"djF8Z3x0fDB8MXwyfDM\",\"type\":\"accept\"}]}",
                " { \"acks\" : [ {\"type\":\"release\",\"lease\":\"a\\\"b\\u00e9\"}, {\"lease\":\"c\",\"type\":\"reject\"},"
                        + "{\"lease\":\"\",\"type\":\"renew\"} ] } ")) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            List<Ack> fast = ShareJson.acksStreaming(bytes);
            assertThat(fast).as(body).isNotNull().isEqualTo(ShareJson.acksFromTree(bytes));
            assertThat(ShareJson.acks(bytes)).isEqualTo(fast);
        }
        assertThat(ShareJson.acks("{\"acks\":[{\"lease\":\"a\\\"b\",\"type\":\"reject\"}]}".getBytes(StandardCharsets.UTF_8)))
                .containsExactly(new Ack("a\"b", AckType.REJECT));
    }

    @Test
    void anyOtherBodyIsRefusedAsTheTreeRefusesIt() {
        for (String body : List.of(
                "", "[]", "{}", "{\"acks\":{}}", "{\"acks\":[1]}", "{\"acks\":[{\"lease\":\"a\"}]}",
                "{\"acks\":[{\"type\":\"accept\"}]}", "{\"acks\":[{\"lease\":1,\"type\":\"accept\"}]}",
                "{\"acks\":[{\"lease\":\"a\",\"type\":\"maybe\"}]}", "{\"acks\":[{\"lease\":\"a\",\"type\":\"accept\",\"x\":1}]}",
                "{\"acks\":[],\"more\":1}", "{\"acks\":[]} trailing", "{\"acks\":[{\"lease\":\"a\",\"type\":\"accept\"}",
                "{\"acks\":[{\"lease\":null,\"type\":\"accept\"}]}")) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            assertThat(ShareJson.acksStreaming(bytes)).as(body).isNull();
            TierlogException tree = catchThrowableOfType(() -> ShareJson.acksFromTree(bytes), TierlogException.class);
            TierlogException got = catchThrowableOfType(() -> ShareJson.acks(bytes), TierlogException.class);
            assertThat(got).as(body).isNotNull();
            assertThat(got.getMessage()).isEqualTo(tree.getMessage());
            assertThat(got.extra()).isEqualTo(tree.extra());
        }
    }

    @Test
    void repeatedFieldsGoToTheTreeReadingWhichKeepsTheLastAsBefore() {
        for (String body : List.of("{\"acks\":[{\"lease\":\"a\",\"lease\":\"b\",\"type\":\"accept\"}]}",
                "{\"acks\":[{\"lease\":\"a\",\"type\":\"accept\"}],\"acks\":[]}")) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            assertThat(ShareJson.acksStreaming(bytes)).as(body).isNull();
            assertThat(ShareJson.acks(bytes)).isEqualTo(ShareJson.acksFromTree(bytes));
        }
    }

    /** The hand-written results are the generator's bytes; texts that need escaping go through the generator. */
    @Test
    void resultsAreTheGeneratorsBytes() {
        java.util.Random random = new java.util.Random(24);
        String alphabet = "AZaz09-_=\"\\/\u0001\u007f\u00e9 ";
        for (int run = 0; run < 2000; run++) {
            List<AckResult> results = new java.util.ArrayList<>();
            for (int i = random.nextInt(5); i > 0; i--) {
                StringBuilder lease = new StringBuilder();
                for (int c = random.nextInt(12); c > 0; c--) {
                    lease.append(alphabet.charAt(random.nextInt(random.nextBoolean() ? 7 : alphabet.length())));
                }
                results.add(random.nextBoolean() ? new AckResult(lease.toString(), true, null)
                        : new AckResult(lease.toString(), false, AckResult.LEASE_EXPIRED));
            }
            String generated = new String(ShareJson.resultsByGenerator(results), StandardCharsets.UTF_8);
            assertThat(new String(ShareJson.results(results), StandardCharsets.UTF_8)).as(generated).isEqualTo(generated);
        }
        List<AckResult> plain = List.of(new AckResult("djF8Z3x0fDB8MXwyfDM", true, null),
                new AckResult("djF8Z3x0fDB8MXwyfDQ", false, AckResult.LEASE_EXPIRED));
        assertThat(ShareJson.plainResults(plain)).as("no escaping needed: written by hand")
                .isEqualTo(ShareJson.resultsByGenerator(plain));
        assertThat(ShareJson.plainResults(List.of(new AckResult("a\"b", true, null)))).isNull();
    }
}
