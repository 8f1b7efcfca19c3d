package io.tierlog.client;

import org.xerial.snappy.SnappyInputStream;
import org.xerial.snappy.SnappyOutputStream;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;

/** Snappy as Kafka frames it: snappy-java's stream format ({@code SnappyOutputStream}). Loaded only when used. */
final class SnappyCodec {
    private SnappyCodec() {
    }

    static byte[] compress(byte[] data, int length) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(length / 2 + 64);
        try (SnappyOutputStream s = new SnappyOutputStream(out)) {
            s.write(data, 0, length);
        }
        return out.toByteArray();
    }

    static InputStream input(InputStream compressed) throws IOException {
        return new SnappyInputStream(compressed);
    }
}
