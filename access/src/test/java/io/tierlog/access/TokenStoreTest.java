package io.tierlog.access;

import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class TokenStoreTest {
    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock(1_000_000);

    TokenStore store() {
        return new TokenStore(dir, clock, new Secrets(new SecureRandom()));
    }

    @Test
    void aMintedTokenWorksAtOnceAndItsSecretIsNeverStored() throws Exception {
        TokenStore s = store();
        TokenStore.Minted m = s.mint("ci", Scopes.parse("produce:topic:orders"), null);
        assertThat(m.secret()).startsWith(Secrets.PREFIX);
        // 256 random bits: 43 base64url characters
        assertThat(m.secret().length() - Secrets.PREFIX.length()).isEqualTo(43);
        assertThat(s.find(m.secret()).record().principal().name()).isEqualTo("token:" + m.record().id());
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                String content = Files.readString(f, StandardCharsets.UTF_8);
                assertThat(content).doesNotContain(m.secret().substring(Secrets.PREFIX.length()));
                assertThat(content).contains(HexFormat.of().formatHex(Secrets.sha256(m.secret())));
            }
        }
    }

    @Test
    void unknownExpiredAndRevokedAreTold() {
        TokenStore s = store();
        TokenStore.Minted expiring = s.mint("short", Scopes.parse("fetch:topic:a"), clock.millis() + 1000);
        TokenStore.Minted revoked = s.mint("gone", Scopes.parse("fetch:topic:a"), null);
        assertThat(s.find("tierlog_nothing").failure()).isEqualTo(AuthFailure.UNKNOWN);
        assertThat(s.find(expiring.secret()).record()).isNotNull();
        clock.advanceMillis(1000);
        assertThat(s.find(expiring.secret()).failure()).isEqualTo(AuthFailure.EXPIRED);
        assertThat(s.revoke(revoked.record().id())).isTrue();
        assertThat(s.find(revoked.secret()).failure()).isEqualTo(AuthFailure.REVOKED);
        assertThat(s.revoke(revoked.record().id())).isFalse();
        assertThat(s.revoke("0123456789abcdef0123456789abcdef")).isFalse();
        assertThat(s.revoke("../../etc/passwd")).isFalse();
        assertThat(s.list()).extracting(r -> r.name()).containsExactly("short");
    }

    @Test
    void anotherInstanceSeesNewAndRevokedTokensAfterARefreshAndARestartKeepsThem() {
        TokenStore a = store();
        TokenStore b = store();
        TokenStore.Minted m = a.mint("ci", Scopes.parse("fetch:topic:a"), null);
        assertThat(b.find(m.secret()).failure()).isEqualTo(AuthFailure.UNKNOWN);
        b.refresh();
        assertThat(b.find(m.secret()).record()).isNotNull();
        assertThat(a.revoke(m.record().id())).isTrue();
        assertThat(b.find(m.secret()).record()).isNotNull();
        b.refresh();
        assertThat(b.find(m.secret()).failure()).isEqualTo(AuthFailure.REVOKED);
        assertThat(store().find(m.secret()).failure()).isEqualTo(AuthFailure.REVOKED);
    }

    @Test
    void theRefresherPicksUpARevocationWithinTwoSeconds() throws Exception {
        TokenStore a = new TokenStore(dir, java.time.Clock.systemUTC(), new Secrets(new SecureRandom()));
        TokenStore b = new TokenStore(dir, java.time.Clock.systemUTC(), new Secrets(new SecureRandom()));
        b.startRefresher(Duration.ofMillis(200));
        try {
            TokenStore.Minted m = a.mint("ci", Scopes.parse("fetch:topic:a"), null);
            long start = System.nanoTime();
            while (b.find(m.secret()).record() == null) {
                assertThat(System.nanoTime() - start).isLessThan(Duration.ofSeconds(2).toNanos());
                Thread.sleep(20); // polling the other instance's view is what is being measured
            }
            a.revoke(m.record().id());
            start = System.nanoTime();
            while (b.find(m.secret()).failure() != AuthFailure.REVOKED) {
                assertThat(System.nanoTime() - start).isLessThan(Duration.ofSeconds(2).toNanos());
                Thread.sleep(20);
            }
        } finally {
            b.close();
        }
    }

    @Test
    void concurrentMintsAndRevokesFromTwoInstancesLoseNothing() throws Exception {
        TokenStore a = store();
        TokenStore b = store();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<TokenStore.Minted>> minted = new ArrayList<>();
        try {
            for (int i = 0; i < 40; i++) {
                TokenStore s = i % 2 == 0 ? a : b;
                int n = i;
                minted.add(pool.submit(() -> {
                    go.await();
                    return s.mint("t" + n, Scopes.parse("fetch:topic:a"), null);
                }));
            }
            go.countDown();
            List<TokenStore.Minted> all = new ArrayList<>();
            for (Future<TokenStore.Minted> f : minted) {
                all.add(f.get());
            }
            List<Future<Boolean>> revokes = new ArrayList<>();
            for (TokenStore.Minted m : all.subList(0, 20)) {
                revokes.add(pool.submit(() -> a.revoke(m.record().id())));
                revokes.add(pool.submit(() -> b.revoke(m.record().id())));
                // the refresher of either instance runs meanwhile
                revokes.add(pool.submit(() -> {
                    b.refresh();
                    return false;
                }));
            }
            int revoked = 0;
            for (Future<Boolean> f : revokes) {
                revoked += f.get() ? 1 : 0;
            }
            // two instances racing on one token may both answer "revoked" (idempotent); none may fail to
            assertThat(revoked).isBetween(20, 40);
            TokenStore fresh = store();
            for (int i = 0; i < all.size(); i++) {
                assertThat(fresh.find(all.get(i).secret()).failure())
                        .isEqualTo(i < 20 ? AuthFailure.REVOKED : null);
            }
            assertThat(fresh.list()).hasSize(20);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aLeftoverTemporaryFileOrAGarbledFileIsSkipped() throws Exception {
        TokenStore a = store();
        TokenStore.Minted m = a.mint("ci", Scopes.parse("fetch:topic:a"), null);
        Files.writeString(dir.resolve(".x.json.tmp"), "{\"torn");
        Files.writeString(dir.resolve("garbled.json"), "{\"torn");
        TokenStore b = store();
        assertThat(b.find(m.secret()).record()).isNotNull();
        assertThat(b.list()).hasSize(1);
    }
}
