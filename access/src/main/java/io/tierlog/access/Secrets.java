package io.tierlog.access;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * Token secrets: 256 random bits from a {@link SecureRandom}, written {@value #PREFIX} + base64url so that secret
 * scanners and people recognise one; stored and looked up only as their SHA-256 (a secret has 256 bits of entropy,
 * so a fast hash is enough: there is nothing to brute-force). Thread-safe.
 */
public final class Secrets {
    public static final String PREFIX = "tierlog_";
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    private final SecureRandom random;

    public Secrets(SecureRandom random) {
        this.random = random;
    }

    public String newSecret() {
        byte[] b = new byte[32];
        random.nextBytes(b);
        return PREFIX + B64.encodeToString(b);
    }

    /** {@code n} random bytes: a secret that is not text (a Kafka delegation token's HMAC). */
    public byte[] newBytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** A public token id: 128 random bits, hex (safe in a URL path and a file name). */
    public String newId() {
        byte[] b = new byte[16];
        random.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    public static byte[] sha256(String secret) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** Constant-time comparison of two hashes. */
    public static boolean same(byte[] a, byte[] b) {
        return MessageDigest.isEqual(a, b);
    }
}
