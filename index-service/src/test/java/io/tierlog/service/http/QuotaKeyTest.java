package io.tierlog.service.http;

import io.tierlog.access.Principal;
import io.tierlog.access.Scopes;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Whose quota a request counts against: a token's principal by name, the anonymous caller by address. */
class QuotaKeyTest {
    @Test
    void aTokenCountsByItsNameWhateverItsAddress() {
        Principal token = new Principal("token:abc", Scopes.parse("produce:topic:orders"));
        assertThat(QuotaRoute.quotaKey(token, "10.0.0.1")).isEqualTo("principal:token:abc")
                .isEqualTo(QuotaRoute.quotaKey(token, "10.0.0.2"));
    }

    @Test
    void anonymousCallersCountPerAddressNotAsOne() {
        assertThat(QuotaRoute.quotaKey(Principal.ANONYMOUS, "10.0.0.1")).isEqualTo("address:10.0.0.1");
        assertThat(QuotaRoute.quotaKey(Principal.ANONYMOUS, "10.0.0.2")).isEqualTo("address:10.0.0.2");
        assertThat(QuotaRoute.quotaKey(null, null)).isEqualTo("address:unknown");
    }
}
