package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.Base64;
import java.util.Map;

/**
 * {@link KafkaTlsTest}'s tests with the keystore given as base64 text ({@code tierlog.kafka.tls-keystore-base64}),
 * as a deployment passes it from a secret in the environment, and no keystore file configured.
 */
@QuarkusTest
@TestProfile(KafkaTlsBase64Test.Base64Keystore.class)
class KafkaTlsBase64Test extends KafkaTlsTest {

    public static class Base64Keystore implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            try {
                // Wrapped at 76 characters, as `base64` prints it by default: the service takes it either way.
                String keystore = Base64.getMimeEncoder().encodeToString(Files.readAllBytes(DIR.resolve("server.p12")));
                return Map.of("tierlog.auth.mode", "token", "tierlog.auth.bootstrap-token", TOKEN,
                        "tierlog.kafka.tls-keystore-base64", keystore,
                        "tierlog.kafka.tls-keystore-password", PASSWORD);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
