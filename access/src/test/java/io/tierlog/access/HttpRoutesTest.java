package io.tierlog.access;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class HttpRoutesTest {

    static String req(String method, String path) {
        return HttpRoutes.requirements(method, path).toString();
    }

    @Test
    void everyRouteOfTheContractMapsToItsOperation() {
        assertThat(req("GET", "/v1/topics")).isEqualTo("[]");
        assertThat(req("POST", "/v1/topics")).isEqualTo("[create on topic:<name in the body>]");
        assertThat(req("GET", "/v1/topics/orders")).isEqualTo("[describe on topic:orders]");
        assertThat(req("HEAD", "/v1/topics/orders/")).isEqualTo("[describe on topic:orders]");
        assertThat(req("DELETE", "/v1/topics/orders")).isEqualTo("[delete on topic:orders]");
        assertThat(req("PATCH", "/v1/topics/orders/config")).isEqualTo("[alter on topic:orders]");
        assertThat(req("POST", "/v1/topics/orders/records")).isEqualTo("[produce on topic:orders]");
        assertThat(req("GET", "/v1/topics/orders/partitions/0/records")).isEqualTo("[fetch on topic:orders]");
        assertThat(req("GET", "/v1/topics/orders/partitions/0/offsets")).isEqualTo("[fetch on topic:orders]");
        assertThat(req("GET", "/v1/topics/orders/partitions/0/stream")).isEqualTo("[fetch on topic:orders]");
        assertThat(req("GET", "/v1/topics/orders/keys/user%2042")).isEqualTo("[fetch on topic:orders]");
        assertThat(req("GET", "/v1/groups")).isEqualTo("[]");
        assertThat(req("PUT", "/v1/groups/g/offsets")).isEqualTo("[commit on group:g]");
        assertThat(req("GET", "/v1/groups/g/offsets")).isEqualTo("[read on group:g]");
        assertThat(req("GET", "/v1/groups/g/lag")).isEqualTo("[read on group:g]");
        assertThat(req("GET", "/v1/groups/g")).isEqualTo("[read on group:g]");
        assertThat(req("DELETE", "/v1/groups/g")).isEqualTo("[delete on group:g]");
        assertThat(req("POST", "/v1/groups/g/heartbeat")).isEqualTo("[read on group:g]");
        assertThat(req("POST", "/v1/groups/g/offsets/reset")).isEqualTo("[commit on group:g]");
        assertThat(req("POST", "/v1/share-groups/s/topics/orders/lease"))
                .isEqualTo("[read on group:s, fetch on topic:orders]");
        assertThat(req("POST", "/v1/share-groups/s/topics/orders/acks"))
                .isEqualTo("[read on group:s, fetch on topic:orders]");
        assertThat(req("PUT", "/v1/share-groups/s/config")).isEqualTo("[commit on group:s]");
        assertThat(req("GET", "/v1/share-groups/s")).isEqualTo("[read on group:s]");
        assertThat(req("DELETE", "/v1/share-groups/s")).isEqualTo("[delete on group:s]");
    }

    @Test
    void tokensAndUnknownPathsNeedAdmin() {
        String admin = "[admin on cluster]";
        for (String[] r : List.of(new String[]{"POST", "/v1/tokens"}, new String[]{"GET", "/v1/tokens"},
                new String[]{"DELETE", "/v1/tokens/abc"}, new String[]{"GET", "/v1/nothing"},
                new String[]{"POST", "/v1/topics/orders"}, new String[]{"PUT", "/v1/topics/orders/records"},
                new String[]{"GET", "/v1/topics/orders/partitions/0/other"}, new String[]{"GET", "/v1"},
                new String[]{"GET", "/v1/share-groups"}, new String[]{"OPTIONS", "/v1/topics"})) {
            assertThat(req(r[0], r[1])).as(r[0] + " " + r[1]).isEqualTo(admin);
        }
    }
}
