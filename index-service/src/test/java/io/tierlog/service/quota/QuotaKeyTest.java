package io.tierlog.service.quota;

import io.tierlog.access.Principal;
import io.tierlog.access.Scopes;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Whose quota a request counts against: a token's principal by name, the anonymous caller by address. */
class QuotaKeyTest {
    @Test
    void aTokenCountsByItsNameWhateverItsAddress() {
        Principal token = new Principal("token:abc", Scopes.parse("produce:topic:orders"));
        assertThat(Quotas.key(token, "10.0.0.1")).isEqualTo("principal:token:abc")
                .isEqualTo(Quotas.key(token, "10.0.0.2"));
    }

    @Test
    void anonymousCallersCountPerAddressNotAsOne() {
        assertThat(Quotas.key(Principal.ANONYMOUS, "10.0.0.1")).isEqualTo("address:10.0.0.1");
        assertThat(Quotas.key(Principal.ANONYMOUS, "10.0.0.2")).isEqualTo("address:10.0.0.2");
        assertThat(Quotas.key(null, null)).isEqualTo("address:unknown");
    }
}
