package io.tierlog.client;

/**
 * How the producer compresses a batch's records: Kafka's codecs, with Kafka's attribute codes and framing, so the
 * service and Kafka tools read them. {@code NONE} and {@code GZIP} need only the JDK; the others need their library
 * on the class path, an optional dependency of the client (docs/client.md, "Compression"): {@code SNAPPY}
 * org.xerial.snappy:snappy-java, {@code LZ4} at.yawk.lz4:lz4-java, {@code ZSTD} com.github.luben:zstd-jni.
 */
public enum Compression {
    NONE(0),
    GZIP(1),
    SNAPPY(2),
    LZ4(3),
    ZSTD(4);

    final int code;

    Compression(int code) {
        this.code = code;
    }

    /** Whether this codec's library is on the class path (always for NONE and GZIP). */
    public boolean available() {
        return Codecs.missingLibrary(this) == null;
    }
}
