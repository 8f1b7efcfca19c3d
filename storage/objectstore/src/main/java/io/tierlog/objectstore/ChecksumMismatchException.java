package io.tierlog.objectstore;

/**
 * The bytes the store received are not the bytes the caller sent: the CRC32C computed from the source did
 * not match the one the store computed (S3's BadDigest), or the source file changed while it was uploaded.
 * Nothing was stored. Retrying is fine if the source is sound.
 */
public class ChecksumMismatchException extends ObjectStoreException {

    public ChecksumMismatchException(String message, Throwable cause) {
        super(message, cause);
    }
}
