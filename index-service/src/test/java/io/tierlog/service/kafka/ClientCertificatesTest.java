package io.tierlog.service.kafka;

import io.tierlog.access.Operation;
import io.tierlog.access.Resource;
import org.junit.jupiter.api.Test;

import javax.security.auth.x500.X500Principal;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The subject-to-scopes mapping of client certificates (ADR 0055): how subjects match, what start-up refuses. */
class ClientCertificatesTest {
    @Test
    void subjectsMatchInCanonicalFormWhateverTheirCaseAndSpacing() {
        ClientCertificates certs = ClientCertificates.of(Map.of("CN=orders-app,O=Acme", "produce:topic:orders*"),
                Optional.empty());

        assertThat(certs.scopesOf(new X500Principal("cn=Orders-App, o=ACME"))).isNotNull()
                .satisfies(s -> assertThat(s.allows(Operation.PRODUCE, Resource.topic("orders-eu"))).isTrue())
                .satisfies(s -> assertThat(s.allows(Operation.PRODUCE, Resource.topic("payments"))).isFalse());
        assertThat(certs.scopesOf(new X500Principal("CN=orders-app,O=Other"))).isNull();
        assertThat(certs.scopesOf(new X500Principal("CN=orders-app"))).isNull();
    }

    @Test
    void aSubjectThatIsNotADistinguishedNameOrScopesThatDoNotParseRefuseToStart() {
        assertThatThrownBy(() -> ClientCertificates.of(Map.of("orders-app", "produce:topic:orders"), Optional.empty()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("orders-app")
                .hasMessageContaining("distinguished name");
        assertThatThrownBy(() -> ClientCertificates.of(Map.of("CN=orders-app", "produce:everything"), Optional.empty()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("tls-client-scopes.\"CN=orders-app\"");
    }

    @Test
    void theJsonFormIsMergedWithTheMapAndChecked() {
        ClientCertificates certs = ClientCertificates.of(Map.of("CN=a", "fetch:topic:a"),
                Optional.of("{\"CN=orders-app,O=Acme\": \"produce:topic:orders*\"}"));
        assertThat(certs.scopesOf(new X500Principal("CN=a"))).isNotNull();
        assertThat(certs.scopesOf(new X500Principal("CN=orders-app,O=Acme"))).isNotNull();

        assertThatThrownBy(() -> ClientCertificates.of(Map.of(), Optional.of("[\"CN=a\"]")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("tls-client-scopes-json");
        assertThatThrownBy(() -> ClientCertificates.of(Map.of("CN=a", "fetch:topic:a"),
                Optional.of("{\"CN=a\": \"fetch:topic:b\"}")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("both name CN=a");
    }
}
