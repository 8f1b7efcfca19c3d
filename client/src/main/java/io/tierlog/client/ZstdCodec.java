package io.tierlog.client;

import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import com.github.luben.zstd.ZstdOutputStreamNoFinalizer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;

/** Zstandard as Kafka writes it: one zstd frame, level 3 (Kafka's default). Loaded only when used. */
final class ZstdCodec {
    private static final int LEVEL = 3;

    private ZstdCodec() {
    }

    static byte[] compress(byte[] data, int length) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(length / 2 + 64);
        try (ZstdOutputStreamNoFinalizer z = new ZstdOutputStreamNoFinalizer(out, LEVEL)) {
            z.write(data, 0, length);
        }
        return out.toByteArray();
    }

    static InputStream input(InputStream compressed) throws IOException {
        return new ZstdInputStreamNoFinalizer(compressed);
    }
}
