package io.tierlog.sharegroups;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** Lease strings: the fast encoding is the documented format, and decoding gives back every field. */
class LeaseIdTest {
    @Test
    void theFastEncodingIsTheDocumentedFormatAndDecodesBack() {
        Random rnd = new Random(24);
        for (int i = 0; i < 2000; i++) {
            LeaseId id = new LeaseId("group-" + rnd.nextInt(100), "topic.é" + rnd.nextInt(9), rnd.nextInt(1000),
                    rnd.nextLong() & Long.MAX_VALUE >>> rnd.nextInt(63), rnd.nextLong() & Long.MAX_VALUE,
                    1 + rnd.nextInt(Integer.MAX_VALUE - 1));
            String documented = Base64.getUrlEncoder().withoutPadding().encodeToString(String.join("|", "v1",
                    id.group(), id.topic(), Integer.toString(id.partition()), Long.toString(id.offset()),
                    Long.toString(id.incarnation()), Integer.toString(id.deliveryCount())).getBytes(StandardCharsets.UTF_8));
            assertThat(id.encode()).isEqualTo(documented);
            assertThat(LeaseId.decode(documented)).contains(id);
        }
        LeaseId zero = new LeaseId("g", "t", 0, 0, 0, 0);
        assertThat(LeaseId.decode(zero.encode())).contains(zero);
    }

    @Test
    void stringsThatAreNotLeasesDecodeToNothing() {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        for (String text : List.of("v1|g|t|0|1|2", "v1|g|t|0|1|2|3|4", "v2|g|t|0|1|2|3", "v1||t|0|1|2|3",
                "v1|g||0|1|2|3", "v1|g|t|x|1|2|3", "v1|g|t|0|1|2|")) {
            assertThat(LeaseId.decode(b64.encodeToString(text.getBytes(StandardCharsets.UTF_8)))).as(text).isEmpty();
        }
        assertThat(LeaseId.decode("not base64 !")).isEmpty();
    }
}
