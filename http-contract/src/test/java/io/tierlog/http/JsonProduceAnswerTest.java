package io.tierlog.http;

import io.tierlog.ingest.BatchProduceResult;
import io.tierlog.ingest.PartitionOffset;
import io.tierlog.ingest.ProduceResult;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The produce answers, now written straight into bytes, against the way they were rendered before (a StringBuilder,
 * a String, its encoding): byte for byte the same for JSON and record-batch results, small and large numbers,
 * duplicates or not.
 */
class JsonProduceAnswerTest {

    @Test
    void aJsonResultIsAnsweredAsBefore() {
        Random random = new Random(7);
        for (int round = 0; round < 200; round++) {
            List<PartitionOffset> offsets = new ArrayList<>();
            int n = 1 + random.nextInt(round < 100 ? 5 : 2000);
            for (int i = 0; i < n; i++) {
                long offset = switch (random.nextInt(4)) {
                    case 0 -> random.nextInt(10);
                    case 1 -> Long.MAX_VALUE - random.nextInt(10);
                    case 2 -> (long) Math.pow(10, random.nextInt(19));
                    default -> random.nextLong() & Long.MAX_VALUE;
                };
                offsets.add(new PartitionOffset(random.nextInt(round % 2 == 0 ? 3 : Integer.MAX_VALUE), offset));
            }
            ProduceResult result = new ProduceResult(offsets, random.nextBoolean());
            assertThat(new String(JsonProduce.answer(result), StandardCharsets.US_ASCII)).isEqualTo(before(result));
        }
    }

    @Test
    void aRecordBatchResultIsAnsweredAsItsJsonForm() {
        for (BatchProduceResult result : List.of(new BatchProduceResult(0, 0, 1, false),
                new BatchProduceResult(7, 9_999_995, 1000, true), new BatchProduceResult(Integer.MAX_VALUE,
                        Long.MAX_VALUE - 3, 4, false), new BatchProduceResult(3, 99, 2, false))) {
            assertThat(new String(JsonProduce.answer(result), StandardCharsets.US_ASCII))
                    .isEqualTo(before(result.toProduceResult()));
        }
    }

    /** The answer is sized from the numbers' decimal lengths before it is written; they must be exact. */
    @Test
    void decimalLengthsAreExact() {
        List<Long> values = new ArrayList<>(List.of(0L, -1L, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1,
                (long) Integer.MAX_VALUE, Integer.MAX_VALUE + 1L));
        long power = 1;
        for (int exponent = 0; exponent <= 18; exponent++, power *= 10) {
            values.addAll(List.of(power - 1, power, power + 1, -power, 1 - power));
        }
        for (long v : values) {
            assertThat(JsonProduce.digits(v)).as("digits of %d", v).isEqualTo(Long.toString(v).length());
        }
    }

    /** The rendering before the change, kept here as the reference. */
    private static String before(ProduceResult result) {
        StringBuilder out = new StringBuilder();
        out.append("{\"offsets\":[");
        boolean first = true;
        for (PartitionOffset o : result.offsets()) {
            out.append(first ? "" : ",").append("{\"partition\":").append(o.partition()).append(",\"offset\":")
                    .append(o.offset()).append('}');
            first = false;
        }
        return out.append("],\"duplicate\":").append(result.duplicate()).append('}').toString();
    }
}
