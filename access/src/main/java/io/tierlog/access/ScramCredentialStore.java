package io.tierlog.access;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * SCRAM credentials (RFC 5802) of named users, what Kafka's {@code AlterUserScramCredentials} sets (KIP-554): per user
 * and mechanism the salt, the iteration count and the two keys derived from the salted password, never the password
 * or the salted password, so a copy of the volume lets no one authenticate. A user's permissions are the grants made
 * to its principal name, {@code scram:<user>} ({@link #principalName}); it carries no scopes of its own.
 *
 * <p><b>Durable on the shared hot volume</b>, one {@link VolumeRecords} file per user and mechanism, named by the
 * SHA-256 of both: {@link #put} replaces and {@link #remove} unlinks it before they return, so an answered deletion
 * (a revocation) is never lost, and two instances changing one credential write one file (the last write wins, as
 * two Kafka alterations of one credential do). Other instances see a change at their next refresh. Thread-safe.
 */
public final class ScramCredentialStore implements AutoCloseable {
    /** The prefix of a SCRAM user's principal name. */
    public static final String PRINCIPAL_PREFIX = "scram:";

    private static final char SEPARATOR = '\u0000';

    private final VolumeRecords<Credential, Index> records;

    /**
     * One user's credential for one mechanism ({@code SCRAM-SHA-256}, {@code SCRAM-SHA-512}): RFC 5802's salt,
     * iteration count, StoredKey and ServerKey.
     */
    public record Credential(String user, String mechanism, byte[] salt, int iterations, byte[] storedKey,
                             byte[] serverKey) {
        public Credential {
            Objects.requireNonNull(user, "user");
            Objects.requireNonNull(mechanism, "mechanism");
            Objects.requireNonNull(salt, "salt");
            Objects.requireNonNull(storedKey, "storedKey");
            Objects.requireNonNull(serverKey, "serverKey");
        }

        String key() {
            return keyOf(user, mechanism);
        }

        Map<String, Object> toJson() {
            Base64.Encoder b64 = Base64.getEncoder();
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("user", user);
            json.put("mechanism", mechanism);
            json.put("salt", b64.encodeToString(salt));
            json.put("iterations", iterations);
            json.put("storedKey", b64.encodeToString(storedKey));
            json.put("serverKey", b64.encodeToString(serverKey));
            return json;
        }

        static Credential parse(String key, Map<String, Object> json) {
            Base64.Decoder b64 = Base64.getDecoder();
            Credential c = new Credential((String) json.get("user"), (String) json.get("mechanism"),
                    b64.decode((String) json.get("salt")), ((Number) json.get("iterations")).intValue(),
                    b64.decode((String) json.get("storedKey")), b64.decode((String) json.get("serverKey")));
            if (!c.key().equals(key)) {
                throw new IllegalArgumentException("its name is not its credential's");
            }
            return c;
        }
    }

    /** The credentials by user, then mechanism. */
    private record Index(Map<String, Map<String, Credential>> byUser) {
        static Index of(Map<String, Credential> credentials) {
            Map<String, Map<String, Credential>> byUser = new HashMap<>();
            credentials.values().forEach(c -> byUser.computeIfAbsent(c.user(), u -> new HashMap<>())
                    .put(c.mechanism(), c));
            Map<String, Map<String, Credential>> frozen = new HashMap<>();
            byUser.forEach((u, m) -> frozen.put(u, Map.copyOf(m)));
            return new Index(Map.copyOf(frozen));
        }
    }

    /** A store over {@code dir} (created when missing), loaded before this returns. */
    public ScramCredentialStore(Path dir, Clock clock, Secrets secrets) {
        this.records = new VolumeRecords<>(dir, clock, secrets, "SCRAM credential", Credential::parse, Index::of);
    }

    /** The credential directory under a hot volume: {@code <data-dir>/__metadata/scram}. */
    public static Path directoryIn(Path dataDir) {
        return dataDir.resolve("__metadata").resolve("scram");
    }

    /** The principal name a SCRAM user authenticates as, and grants name. */
    public static String principalName(String user) {
        return PRINCIPAL_PREFIX + user;
    }

    /** Re-reads the directory every {@code period} on a daemon thread, until {@link #close}. */
    public void startRefresher(Duration period) {
        records.startRefresher(period);
    }

    /** Re-reads the directory: credentials removed elsewhere leave the view, new and changed ones join it. */
    public void refresh() {
        records.refresh();
    }

    /** Sets {@code credential}, replacing the user's credential for its mechanism; durable before it returns. */
    public void put(Credential credential) {
        records.put(credential.key(), credential.toJson(), credential);
    }

    /** Removes {@code user}'s credential for {@code mechanism}; durable before it returns. False if there was none. */
    public boolean remove(String user, String mechanism) {
        return records.remove(keyOf(user, mechanism));
    }

    /** {@code user}'s credential for {@code mechanism}, as this instance last read the volume. */
    public Optional<Credential> find(String user, String mechanism) {
        return Optional.ofNullable(records.index().byUser().getOrDefault(user, Map.of()).get(mechanism));
    }

    /** {@code user}'s credentials by mechanism (empty when it has none). */
    public Map<String, Credential> of(String user) {
        return records.index().byUser().getOrDefault(user, Map.of());
    }

    /** Every credential, by user, then mechanism. */
    public List<Credential> list() {
        List<Credential> out = new ArrayList<>(records.all().values());
        out.sort(Comparator.comparing(Credential::user).thenComparing(Credential::mechanism));
        return out;
    }

    static String keyOf(String user, String mechanism) {
        return HexFormat.of().formatHex(Secrets.sha256(user + SEPARATOR + mechanism));
    }

    @Override
    public void close() {
        records.close();
    }
}
