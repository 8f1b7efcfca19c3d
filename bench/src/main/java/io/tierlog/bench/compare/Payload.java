package io.tierlog.bench.compare;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The record values both systems store: identical bytes on both sides, so MB/s compare like for like.
 *
 * <p>Each value is the JSON text of a string of {@code valueBytes - 2} random alphanumerics, quotes included, so
 * it is exactly {@code valueBytes} long. Tierlog's {@code encoding=json} stores a JSON value as its compact
 * text, which is these very bytes; Kafka stores them as the raw value. Alphanumerics need no JSON escaping, and
 * random ones do not compress (neither side compresses anyway). A small pool of distinct values is cycled.
 * Immutable and thread-safe.
 */
public final class Payload {
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final int POOL = 64;

    private final int valueBytes;
    private final String[] jsonTexts;
    private final byte[][] bytes;

    public Payload(int valueBytes, long seed) {
        if (valueBytes < 2) {
            throw new IllegalArgumentException("valueBytes must be >= 2, was " + valueBytes);
        }
        this.valueBytes = valueBytes;
        SplittableRandom random = new SplittableRandom(seed);
        jsonTexts = new String[POOL];
        bytes = new byte[POOL][];
        for (int i = 0; i < POOL; i++) {
            StringBuilder sb = new StringBuilder(valueBytes);
            sb.append('"');
            for (int j = 0; j < valueBytes - 2; j++) {
                sb.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
            }
            sb.append('"');
            jsonTexts[i] = sb.toString();
            bytes[i] = jsonTexts[i].getBytes(StandardCharsets.US_ASCII);
        }
    }

    public int valueBytes() {
        return valueBytes;
    }

    /** The i-th value as raw bytes (do not modify). */
    public byte[] bytes(long i) {
        return bytes[(int) Math.floorMod(i, (long) POOL)];
    }

    /** The i-th value as JSON text, quotes included: what goes into a Tierlog produce body verbatim. */
    public String jsonText(long i) {
        return jsonTexts[(int) Math.floorMod(i, (long) POOL)];
    }
}
