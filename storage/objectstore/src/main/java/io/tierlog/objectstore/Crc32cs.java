package io.tierlog.objectstore;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.zip.CRC32C;

/**
 * CRC32C helpers shared by the backends. S3 carries CRC32C as the base64 of the 4 big-endian checksum bytes
 * ({@code x-amz-checksum-crc32c}), so that is the one text form used everywhere.
 */
public final class Crc32cs {

    private Crc32cs() {
    }

    /** The CRC32C of {@code bytes[offset, offset+length)}. */
    public static int of(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }

    /** The CRC32C of all of {@code bytes}. */
    public static int of(byte[] bytes) {
        return of(bytes, 0, bytes.length);
    }

    /** S3's text form: base64 of the big-endian 4-byte value. */
    public static String toBase64(int crc) {
        return Base64.getEncoder().encodeToString(ByteBuffer.allocate(4).putInt(crc).array());
    }
}
