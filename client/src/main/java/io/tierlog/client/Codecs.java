package io.tierlog.client;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * Compression of a batch's records, Kafka's way per codec. The classes that touch snappy-java, lz4-java and
 * zstd-jni ({@link SnappyCodec}, {@link Lz4Codec}, {@link ZstdCodec}) are only loaded when their codec is used, so a
 * client without those optional libraries works for every other codec. Stateless and thread-safe.
 */
final class Codecs {
    private Codecs() {
    }

    /** The Maven coordinates of {@code c}'s missing library, or null when it can be used. */
    static String missingLibrary(Compression c) {
        String probe;
        String artifact;
        switch (c) {
            case SNAPPY -> {
                probe = "org.xerial.snappy.SnappyOutputStream";
                artifact = "org.xerial.snappy:snappy-java";
            }
            case LZ4 -> {
                probe = "net.jpountz.lz4.LZ4Factory";
                artifact = "at.yawk.lz4:lz4-java";
            }
            case ZSTD -> {
                probe = "com.github.luben.zstd.ZstdOutputStreamNoFinalizer";
                artifact = "com.github.luben:zstd-jni";
            }
            default -> {
                return null;
            }
        }
        try {
            Class.forName(probe, false, Codecs.class.getClassLoader());
            return null;
        } catch (ClassNotFoundException | LinkageError e) {
            return artifact;
        }
    }

    /** {@code data[0, length)} compressed with {@code c} (not NONE). */
    static byte[] compress(Compression c, byte[] data, int length) {
        try {
            return switch (c) {
                case GZIP -> gzip(data, length);
                case SNAPPY -> SnappyCodec.compress(data, length);
                case LZ4 -> Lz4Codec.compress(data, length);
                case ZSTD -> ZstdCodec.compress(data, length);
                case NONE -> throw new IllegalArgumentException("NONE is not a codec");
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (LinkageError e) {
            throw new IllegalStateException("compression " + c + " needs " + missingLibrary(c)
                    + " on the class path (an optional dependency of tierlog-client)", e);
        }
    }

    /**
     * The records of a batch's {@code body[offset, offset + length)}, compressed with Kafka codec {@code code}.
     *
     * @throws RecordBatchCodec.UnsupportedCodecException for an unknown codec or one whose library is missing
     * @throws IllegalArgumentException for bytes that do not decompress
     */
    static byte[] decompress(int code, byte[] body, int offset, int length) {
        Compression c = null;
        for (Compression each : Compression.values()) {
            if (each.code == code && each != Compression.NONE) {
                c = each;
            }
        }
        if (c == null) {
            throw new RecordBatchCodec.UnsupportedCodecException(code, "not a Kafka codec");
        }
        String missing = missingLibrary(c);
        if (missing != null) {
            throw new RecordBatchCodec.UnsupportedCodecException(code, "add " + missing + " to read " + c);
        }
        try (InputStream in = switch (c) {
            case GZIP -> new GZIPInputStream(new ByteArrayInputStream(body, offset, length), 8192);
            case SNAPPY -> SnappyCodec.input(new ByteArrayInputStream(body, offset, length));
            case ZSTD -> ZstdCodec.input(new ByteArrayInputStream(body, offset, length));
            case LZ4 -> new ByteArrayInputStream(Lz4Codec.decompress(body, offset, length));
            case NONE -> throw new IllegalStateException();
        }) {
            return in.readAllBytes();
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("a " + c + " record batch does not decompress: " + e.getMessage(), e);
        }
    }

    private static byte[] gzip(byte[] data, int length) throws IOException {
        ByteArrayOutputStream z = new ByteArrayOutputStream(length / 2 + 64);
        try (GZIPOutputStream gz = new GZIPOutputStream(z, 8192)) {
            gz.write(data, 0, length);
        }
        return z.toByteArray();
    }
}
