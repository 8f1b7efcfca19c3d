package io.tierlog.access;

import io.tierlog.access.ScramCredentialStore.Credential;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class ScramCredentialStoreTest {
    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock(1_000_000);

    ScramCredentialStore store() {
        return new ScramCredentialStore(dir, clock, new Secrets(new SecureRandom()));
    }

    static Credential credential(String user, String mechanism, int iterations, byte fill) {
        byte[] salt = new byte[16];
        byte[] stored = new byte[32];
        byte[] server = new byte[32];
        java.util.Arrays.fill(salt, fill);
        java.util.Arrays.fill(stored, (byte) (fill + 1));
        java.util.Arrays.fill(server, (byte) (fill + 2));
        return new Credential(user, mechanism, salt, iterations, stored, server);
    }

    @Test
    void aCredentialSetOnOneInstanceIsFoundOnAnotherAndItsRemovalReachesItToo() {
        try (ScramCredentialStore a = store(); ScramCredentialStore b = store()) {
            a.put(credential("alice", "SCRAM-SHA-256", 4096, (byte) 1));
            a.put(credential("alice", "SCRAM-SHA-512", 8192, (byte) 5));
            assertThat(b.find("alice", "SCRAM-SHA-256")).as("before b re-reads the volume").isEmpty();

            b.refresh();
            Credential found = b.find("alice", "SCRAM-SHA-256").orElseThrow();
            assertThat(found.iterations()).isEqualTo(4096);
            assertThat(found.salt()).containsOnly(1);
            assertThat(found.storedKey()).containsOnly(2);
            assertThat(found.serverKey()).containsOnly(3);
            assertThat(b.of("alice")).containsOnlyKeys("SCRAM-SHA-256", "SCRAM-SHA-512");
            assertThat(b.find("bob", "SCRAM-SHA-256")).isEmpty();

            assertThat(a.remove("alice", "SCRAM-SHA-256")).isTrue();
            assertThat(a.remove("alice", "SCRAM-SHA-256")).as("already gone").isFalse();
            b.refresh();
            assertThat(b.find("alice", "SCRAM-SHA-256")).as("the deletion, on the other instance").isEmpty();
            assertThat(b.find("alice", "SCRAM-SHA-512")).as("the other mechanism stays").isPresent();
        }
    }

    @Test
    void anAlterationReplacesTheCredentialAndSurvivesARestart() {
        try (ScramCredentialStore a = store()) {
            a.put(credential("alice", "SCRAM-SHA-256", 4096, (byte) 1));
            a.put(credential("alice", "SCRAM-SHA-256", 10000, (byte) 7));
            assertThat(a.list()).hasSize(1);
        }
        try (ScramCredentialStore reopened = store()) {
            Credential c = reopened.find("alice", "SCRAM-SHA-256").orElseThrow();
            assertThat(c.iterations()).isEqualTo(10000);
            assertThat(c.salt()).containsOnly(7);
        }
    }

    @Test
    void aFileWhoseNameIsNotItsCredentialsIsSkipped() throws Exception {
        try (ScramCredentialStore a = store()) {
            a.put(credential("alice", "SCRAM-SHA-256", 4096, (byte) 1));
            Path file;
            try (Stream<Path> files = Files.list(dir)) {
                file = files.filter(p -> p.toString().endsWith(".json")).findFirst().orElseThrow();
            }
            // Another user's name in alice's file: whoever can write the volume cannot move a credential this way.
            String json = Files.readString(file, StandardCharsets.UTF_8).replace("\"alice\"", "\"mallory\"");
            Files.writeString(file, json, StandardCharsets.UTF_8);
        }
        try (ScramCredentialStore reopened = store()) {
            assertThat(reopened.find("mallory", "SCRAM-SHA-256")).isEmpty();
            assertThat(reopened.find("alice", "SCRAM-SHA-256")).isEmpty();
        }
    }
}
