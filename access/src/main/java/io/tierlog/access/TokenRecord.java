package io.tierlog.access;

import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A minted token as stored: its public id, a name for people, its scopes, when it expires ({@code null}: never), when
 * it was created and revoked ({@code null}: not revoked), and the SHA-256 of its secret (never the secret). The only
 * change a record ever sees after it is written is revocation, so concurrent writers cannot undo one another.
 */
public record TokenRecord(String id, String name, Scopes scopes, Long expiresAt, long createdAt, Long revokedAt,
                          byte[] secretHash) {
    /** The prefix of a token's principal name, {@code token:<id>}. */
    public static final String PRINCIPAL_PREFIX = "token:";

    public TokenRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(scopes, "scopes");
        Objects.requireNonNull(secretHash, "secretHash");
    }

    public boolean revoked() {
        return revokedAt != null;
    }

    public boolean expiredAt(long nowMillis) {
        return expiresAt != null && nowMillis >= expiresAt;
    }

    TokenRecord revokedAt(long nowMillis) {
        return revoked() ? this : new TokenRecord(id, name, scopes, expiresAt, createdAt, nowMillis, secretHash);
    }

    /** The principal a request carrying this token acts as. */
    public Principal principal() {
        return new Principal(PRINCIPAL_PREFIX + id, scopes);
    }

    Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("name", name);
        m.put("scopes", scopes.toString());
        m.put("expiresAt", expiresAt);
        m.put("createdAt", createdAt);
        m.put("revokedAt", revokedAt);
        m.put("sha256", HexFormat.of().formatHex(secretHash));
        return m;
    }

    static TokenRecord fromJson(Map<String, Object> m) {
        return new TokenRecord((String) m.get("id"), (String) m.get("name"), Scopes.parse((String) m.get("scopes")),
                toLong(m.get("expiresAt")), toLong(m.get("createdAt")), toLong(m.get("revokedAt")),
                HexFormat.of().parseHex((String) m.get("sha256")));
    }

    private static Long toLong(Object o) {
        return o == null ? null : ((Number) o).longValue();
    }
}
