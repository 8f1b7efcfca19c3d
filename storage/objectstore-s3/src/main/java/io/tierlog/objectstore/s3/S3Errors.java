package io.tierlog.objectstore.s3;

import io.tierlog.objectstore.ChecksumMismatchException;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectNotFoundException;
import io.tierlog.objectstore.ObjectStoreException;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import java.util.Locale;
import java.util.Set;
import software.amazon.awssdk.core.exception.AbortedException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Translates AWS SDK exceptions into the SPI's exception types. The one place that knows S3's status codes and
 * error codes, so the rest of the backend (and every caller) sees only {@code io.tierlog.objectstore} types.
 * 412 and 416 are not handled here: they are answers, not errors, for the operations that can get them.
 */
final class S3Errors {

    private static final Set<String> CHECKSUM_CODES = Set.of("BadDigest", "InvalidDigest",
            "XAmzContentChecksumMismatch", "XAmzContentSHA256Mismatch", "InvalidChecksum");
    private static final Set<String> TRANSIENT_CODES = Set.of("SlowDown", "Throttling", "ThrottlingException",
            "RequestTimeout", "RequestTimeTooSkewed", "InternalError", "ServiceUnavailable");

    private S3Errors() {
    }

    /** HTTP status of an S3 error, or -1 when the request never got an answer. */
    static int status(SdkException e) {
        return e instanceof S3Exception s3 ? s3.statusCode() : -1;
    }

    static String code(SdkException e) {
        if (e instanceof S3Exception s3 && s3.awsErrorDetails() != null) {
            return s3.awsErrorDetails().errorCode();
        }
        return null;
    }

    /**
     * @param operation what was attempted, for the message ("GET", "PUT", ...)
     * @param key       the object concerned, or null for bucket-wide calls
     */
    /**
     * For an I/O failure that escaped the SDK unwrapped (the url-connection client can throw
     * {@link java.io.UncheckedIOException} from its request-body stage): the store was not reachable.
     */
    static ObjectStoreException unreachable(String operation, ObjectKey key, String bucket, RuntimeException e) {
        return new ObjectStoreUnavailableException(operation + " " + (key == null ? "" : key + " ") + "in bucket "
                + bucket + " failed: S3 unreachable (" + rootCause(e) + ")", e);
    }

    /**
     * The innermost cause, class and message: the SDK wraps a refused or reset connection several layers deep, and
     * "unreachable" alone does not tell a stopped server from a timeout or a connection the server closed.
     */
    static String rootCause(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + (root.getMessage() == null ? "" : ": " + root.getMessage());
    }

    static ObjectStoreException translate(String operation, ObjectKey key, String bucket, SdkException e) {
        String what = operation + " " + (key == null ? "" : key + " ") + "in bucket " + bucket;
        if (e instanceof AbortedException) {
            // The SDK aborts when the calling thread is interrupted; keep the interrupt visible to the caller.
            Thread.currentThread().interrupt();
            return new ObjectStoreException(what + " was interrupted", e);
        }
        if (e instanceof SdkClientException) {
            String message = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
            if (message.contains("checksum")) {
                return new ChecksumMismatchException(what + ": response failed checksum validation", e);
            }
            // Connection refused/reset, timeouts, unreadable responses: S3 could not be reached, retries spent.
            return new ObjectStoreUnavailableException(what + " failed: S3 unreachable (" + rootCause(e) + ")", e);
        }
        int status = status(e);
        String code = code(e);
        if (status == 404 && !"NoSuchBucket".equals(code) && key != null) {
            return new ObjectNotFoundException(key, e);
        }
        if (code != null && CHECKSUM_CODES.contains(code)) {
            return new ChecksumMismatchException(what + ": S3 rejected the CRC32C (" + code + ")", e);
        }
        if (status >= 500 || status == 429 || (code != null && TRANSIENT_CODES.contains(code))) {
            return new ObjectStoreUnavailableException(what + " failed: S3 answered " + status + " " + code, e);
        }
        return new ObjectStoreException(what + " failed: S3 answered " + status + " " + code, e);
    }
}
