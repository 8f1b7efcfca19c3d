package io.tierlog.access;

import io.tierlog.access.DelegationTokenStore.Change;
import io.tierlog.access.DelegationTokenStore.Created;
import io.tierlog.access.DelegationTokenStore.Ownership;
import io.tierlog.access.DelegationTokenStore.Status;
import io.tierlog.access.ScramCredentialStore.Credential;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class DelegationTokenStoreTest {
    static final long DAY = Duration.ofDays(1).toMillis();

    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock(1_000_000);

    /** One service instance's store; two over one directory are two instances sharing the volume. */
    DelegationTokenStore store() {
        return new DelegationTokenStore(dir, clock, new Secrets(new SecureRandom()), Duration.ofDays(1),
                Duration.ofDays(7));
    }

    static List<Credential> keys(String id, String password) {
        byte[] salt = password.substring(0, 8).getBytes(StandardCharsets.UTF_8);
        return List.of(new Credential(id, "SCRAM-SHA-256", salt, 4096, new byte[32], new byte[32]));
    }

    static Ownership alice(String... renewers) {
        return new Ownership("scram:alice", "scram:alice", List.of(renewers), Scopes.parse("fetch:topic:orders"));
    }

    @Test
    void aTokenCreatedOnOneInstanceAuthenticatesOnAnotherAtOnceAndExpiresAfterItsRenewTime() {
        try (DelegationTokenStore a = store(); DelegationTokenStore b = store()) {
            Created created = a.create(alice(), -1, DelegationTokenStoreTest::keys);
            String id = created.token().id();
            assertThat(created.token().expiresAt()).isEqualTo(clock.millis() + DAY);
            assertThat(created.token().maxAt()).isEqualTo(clock.millis() + 7 * DAY);

            var found = b.usable(id).orElseThrow();
            assertThat(found.ownership()).isEqualTo(alice());
            assertThat(found.credential("SCRAM-SHA-256").orElseThrow().salt())
                    .isEqualTo(DelegationTokenStore.password(created.hmac()).substring(0, 8)
                            .getBytes(StandardCharsets.UTF_8));
            assertThat(b.usable("0".repeat(32))).isEmpty();
            assertThat(b.usable("../" + id)).isEmpty();

            clock.advance(Duration.ofDays(1).plusMillis(1));
            assertThat(b.usable(id)).as("past its expiry").isEmpty();
            assertThat(a.renew(created.hmac(), "scram:alice", -1).status()).isEqualTo(Status.EXPIRED);
        }
    }

    @Test
    void renewalsMoveTheExpiryButNeverPastTheMaximumAndOnlyForItsManagers() {
        try (DelegationTokenStore a = store(); DelegationTokenStore b = store()) {
            Created created = a.create(new Ownership("scram:alice", "token:" + "a".repeat(32), List.of("scram:ops"),
                    Scopes.NONE), 3 * DAY, DelegationTokenStoreTest::keys);
            long issued = clock.millis();
            assertThat(created.token().maxAt()).as("asked for less than the store's maximum")
                    .isEqualTo(issued + 3 * DAY);

            clock.advance(Duration.ofHours(12));
            assertThat(b.renew(created.hmac(), "scram:mallory", -1).status()).isEqualTo(Status.NOT_MANAGER);
            Change renewed = b.renew(created.hmac(), "scram:ops", -1);
            assertThat(renewed).isEqualTo(new Change(Status.DONE, clock.millis() + DAY));
            assertThat(a.renew(created.hmac(), "token:" + "a".repeat(32), 10 * DAY))
                    .as("the requester may renew; capped at the maximum").isEqualTo(new Change(Status.DONE,
                            issued + 3 * DAY));
            assertThat(b.usable(created.token().id()).orElseThrow().expiresAt()).isEqualTo(issued + 3 * DAY);

            byte[] other = created.hmac().clone();
            other[0] ^= 1;
            assertThat(a.renew(other, "scram:alice", -1).status()).as("a flipped bit").isEqualTo(Status.NOT_FOUND);
            assertThat(a.expire(new byte[0], "scram:alice", -1).status()).isEqualTo(Status.NOT_FOUND);

            assertThat(b.expire(created.hmac(), "scram:alice", Duration.ofHours(1).toMillis()))
                    .isEqualTo(new Change(Status.DONE, clock.millis() + Duration.ofHours(1).toMillis()));
            clock.advance(Duration.ofHours(1).plusMillis(1));
            assertThat(a.usable(created.token().id())).isEmpty();
        }
    }

    @Test
    void aRevocationHoldsOnEveryInstanceEvenAgainstARenewalRacingIt() throws Exception {
        try (DelegationTokenStore a = store(); DelegationTokenStore b = store()) {
            Created created = a.create(alice(), -1, DelegationTokenStoreTest::keys);
            String id = created.token().id();
            assertThat(b.live()).extracting(t -> t.id()).as("before b refreshes").isEmpty();
            assertThat(b.usable(id)).isPresent();
            Path file = dir.resolve("tokens").resolve(id + ".json");
            byte[] beforeRevocation = Files.readAllBytes(file);

            assertThat(b.expire(created.hmac(), "scram:alice", -1).status()).isEqualTo(Status.DONE);
            assertThat(a.usable(id)).as("revoked on b, seen on a").isEmpty();
            assertThat(a.renew(created.hmac(), "scram:alice", -1).status()).isEqualTo(Status.NOT_FOUND);

            // A renewal on a third instance that read the token before the revocation writes it back after it.
            Files.write(file, beforeRevocation);
            assertThat(a.usable(id)).as("the tombstone outlives the rewritten file").isEmpty();
            assertThat(b.renew(created.hmac(), "scram:alice", -1).status()).isEqualTo(Status.NOT_FOUND);
            try (DelegationTokenStore restarted = store()) {
                assertThat(restarted.live()).isEmpty();
                assertThat(restarted.usable(id)).isEmpty();
            }
        }
    }

    @Test
    void theVolumeHoldsNoHmacAndSweepingRemovesOnlyWhatCanNeverBeUsed() throws Exception {
        try (DelegationTokenStore a = store()) {
            Created kept = a.create(alice(), -1, DelegationTokenStoreTest::keys);
            Created revoked = a.create(alice(), 2 * DAY, DelegationTokenStoreTest::keys);
            a.expire(revoked.hmac(), "scram:alice", -1);
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    String text = Files.readString(f);
                    assertThat(text).doesNotContain(DelegationTokenStore.password(kept.hmac()))
                            .doesNotContain(DelegationTokenStore.password(revoked.hmac()));
                }
            }
            assertThat(a.liveOwnedBy("scram:alice")).isEqualTo(1);

            clock.advance(Duration.ofDays(1).plusMillis(1));
            a.sweep();
            assertThat(Files.exists(dir.resolve("expired").resolve(revoked.token().id() + ".json")))
                    .as("the tombstone, before the token's maximum").isTrue();
            assertThat(Files.exists(dir.resolve("tokens").resolve(kept.token().id() + ".json")))
                    .as("expired, but within the grace a racing renewal has").isTrue();

            clock.advance(Duration.ofDays(1));
            a.sweep();
            try (Stream<Path> files = Files.walk(dir)) {
                assertThat(files.filter(Files::isRegularFile).toList()).isEmpty();
            }
        }
    }
}
