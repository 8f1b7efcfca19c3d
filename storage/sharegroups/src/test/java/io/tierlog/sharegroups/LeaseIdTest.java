package io.tierlog.sharegroups;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
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

    @Test
    void decodingOverBytesAcceptsAndRefusesWhatSplittingTheStringDid() {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        List<String> numbers = List.of("0", "7", "-1", "+5", "-", "", "007", "2147483647", "2147483648", "-2147483648",
                "-2147483649", "999999999", "9999999999", "999999999999999999", "9223372036854775807",
                "9223372036854775808", "-9223372036854775808", "--1", "1-", "\u0663", "\uff11\uff12", "1 ", " 1", "x");
        Random rnd = new Random(2430);
        for (int i = 0; i < 20_000; i++) {
            String[] f = {rnd.nextInt(20) == 0 ? "v2" : "v1", rnd.nextInt(20) == 0 ? "" : "g\u00e9" + rnd.nextInt(9),
                    rnd.nextInt(20) == 0 ? "" : "t", pick(numbers, rnd), pick(numbers, rnd), pick(numbers, rnd),
                    pick(numbers, rnd)};
            String text = String.join("|", f) + (rnd.nextInt(30) == 0 ? "|" : "");
            String lease = b64.encodeToString(text.getBytes(StandardCharsets.UTF_8));
            assertThat(LeaseId.decode(lease)).as(text).isEqualTo(decodeBySplitting(lease));
        }
    }

    private static String pick(List<String> numbers, Random rnd) {
        return rnd.nextBoolean() ? numbers.get(rnd.nextInt(numbers.size())) : Long.toString(rnd.nextLong() >>> rnd.nextInt(64));
    }

    /** The decoding before it worked over bytes (strings split by hand, Integer/Long.parse*), as the reference. */
    private static Optional<LeaseId> decodeBySplitting(String lease) {
        try {
            String text = new String(Base64.getUrlDecoder().decode(lease), StandardCharsets.UTF_8);
            String[] f = new String[7];
            int from = 0;
            for (int i = 0; i < 6; i++) {
                int bar = text.indexOf('|', from);
                if (bar < 0) {
                    return Optional.empty();
                }
                f[i] = text.substring(from, bar);
                from = bar + 1;
            }
            f[6] = text.substring(from);
            if (f[6].indexOf('|') >= 0 || !f[0].equals("v1") || f[1].isEmpty() || f[2].isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(new LeaseId(f[1], f[2], Integer.parseInt(f[3]), Long.parseLong(f[4]),
                    Long.parseLong(f[5]), Integer.parseInt(f[6])));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    @Test
    void rangeLeasesAreTheDocumentedFormatAndNotPerRecordLeases() {
        Random rnd = new Random(42);
        for (int i = 0; i < 2000; i++) {
            long first = rnd.nextLong() & Long.MAX_VALUE >>> rnd.nextInt(63);
            RangeLease id = new RangeLease("group-" + rnd.nextInt(100), "topic.é" + rnd.nextInt(9),
                    rnd.nextInt(1000), first, first + rnd.nextInt(1000), rnd.nextLong() & Long.MAX_VALUE,
                    1 + rnd.nextInt(Integer.MAX_VALUE - 1));
            String documented = Base64.getUrlEncoder().withoutPadding().encodeToString(String.join("|", "v2",
                    id.group(), id.topic(), Integer.toString(id.partition()), Long.toString(id.firstOffset()),
                    Long.toString(id.lastOffset()), Long.toString(id.incarnation()),
                    Integer.toString(id.deliveryCount())).getBytes(StandardCharsets.UTF_8));
            assertThat(id.encode()).isEqualTo(documented);
            assertThat(RangeLease.decode(documented)).contains(id);
            assertThat(LeaseId.decode(documented)).isEmpty();
        }
        String perRecord = new LeaseId("g", "t", 0, 5, 1, 1).encode();
        assertThat(RangeLease.decode(perRecord)).isEmpty();
        assertThat(LeaseId.parse(perRecord, false)).contains(new RangeLease("g", "t", 0, 5, 5, 1, 1, false));
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        for (String text : List.of("v2|g|t|0|1|2|3", "v2|g|t|0|1|2|3|4|5", "v2||t|0|1|2|3|4", "v2|g|t|0|5|4|3|4", "v2|g|t|0|x|2|3|4",
                "v3|g|t|0|1|2|3|4")) {
            assertThat(RangeLease.decode(b64.encodeToString(text.getBytes(StandardCharsets.UTF_8)))).as(text).isEmpty();
        }
    }
}
