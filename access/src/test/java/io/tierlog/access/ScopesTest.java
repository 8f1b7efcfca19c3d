package io.tierlog.access;

import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.security.SecureRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScopesTest {

    @Test
    void exactAndPrefixNamesMatchOnlyWhatTheySay() {
        Scopes s = Scopes.parse("produce:topic:orders fetch:topic:logs.*  read:group:billing");
        assertThat(s.allows(Operation.PRODUCE, Resource.topic("orders"))).isTrue();
        assertThat(s.allows(Operation.PRODUCE, Resource.topic("orders2"))).isFalse();
        assertThat(s.allows(Operation.FETCH, Resource.topic("orders"))).isFalse();
        assertThat(s.allows(Operation.FETCH, Resource.topic("logs.app"))).isTrue();
        assertThat(s.allows(Operation.FETCH, Resource.topic("logs"))).isFalse();
        assertThat(s.allows(Operation.READ, Resource.group("billing"))).isTrue();
        assertThat(s.allows(Operation.COMMIT, Resource.group("billing"))).isFalse();
        assertThat(s.allows(Operation.READ, Resource.topic("billing"))).isFalse();
    }

    @Test
    void produceAndFetchImplyDescribeOfTheTopicOnly() {
        Scopes s = Scopes.parse("produce:topic:orders fetch:topic:logs*");
        assertThat(s.allows(Operation.DESCRIBE, Resource.topic("orders"))).isTrue();
        assertThat(s.allows(Operation.DESCRIBE, Resource.topic("logs-1"))).isTrue();
        assertThat(s.allows(Operation.DESCRIBE, Resource.topic("other"))).isFalse();
        assertThat(s.allows(Operation.ALTER, Resource.topic("orders"))).isFalse();
        assertThat(Scopes.parse("create:topic:orders").allows(Operation.DESCRIBE, Resource.topic("orders"))).isFalse();
    }

    @Test
    void transactionalIdsHaveTheirOwnScopesAndProduceImpliesDescribe() {
        Scopes s = Scopes.parse("produce:transaction:billing-* describe:transaction:audit");
        assertThat(s.allows(Operation.PRODUCE, Resource.transaction("billing-0"))).isTrue();
        assertThat(s.allows(Operation.DESCRIBE, Resource.transaction("billing-0"))).isTrue();
        assertThat(s.allows(Operation.PRODUCE, Resource.transaction("audit"))).isFalse();
        assertThat(s.allows(Operation.DESCRIBE, Resource.transaction("audit"))).isTrue();
        assertThat(s.allows(Operation.PRODUCE, Resource.topic("billing-0"))).isFalse();
        assertThat(Scopes.parse("produce:topic:billing-0").allows(Operation.PRODUCE,
                Resource.transaction("billing-0"))).isFalse();
        assertThatThrownBy(() -> Scope.parse("fetch:transaction:x")).isInstanceOf(InvalidScopeException.class)
                .hasMessageContaining("(produce, describe)");
    }

    @Test
    void internalTopicsAndTheClusterNeedAdmin() {
        Scopes all = Scopes.parse("fetch:topic:* describe:topic:__* alter:topic:__consumer_offsets");
        assertThat(all.allows(Operation.FETCH, Resource.topic("__consumer_offsets"))).isFalse();
        assertThat(all.allows(Operation.DESCRIBE, Resource.topic("__consumer_offsets"))).isFalse();
        assertThat(all.allows(Operation.ALTER, Resource.topic("__consumer_offsets"))).isFalse();
        assertThat(all.allows(Operation.ADMIN, Resource.CLUSTER)).isFalse();
        Scopes admin = Scopes.parse("admin:cluster");
        assertThat(admin.allows(Operation.ALTER, Resource.topic("__consumer_offsets"))).isTrue();
        assertThat(admin.allows(Operation.ADMIN, Resource.CLUSTER)).isTrue();
        assertThat(admin.allows(Operation.COMMIT, Resource.group("any"))).isTrue();
    }

    @Test
    void anonymousMayDoEverythingButAdminAndInternalTopics() {
        Principal a = Principal.ANONYMOUS;
        for (Operation op : new Operation[]{Operation.PRODUCE, Operation.FETCH, Operation.DESCRIBE, Operation.CREATE,
                Operation.ALTER, Operation.DELETE}) {
            assertThat(a.allows(op, Resource.topic("orders"))).isTrue();
            assertThat(a.allows(op, Resource.topic("__consumer_offsets"))).isFalse();
        }
        assertThat(a.allows(Operation.COMMIT, Resource.group("g"))).isTrue();
        assertThat(a.allows(Operation.PRODUCE, Resource.transaction("app-0"))).isTrue();
        assertThat(a.allows(Operation.ADMIN, Resource.CLUSTER)).isFalse();
    }

    @Test
    void noScopesNoAccess() {
        assertThat(Scopes.parse("").allows(Operation.FETCH, Resource.topic("orders"))).isFalse();
        assertThat(Scopes.NONE.allows(Operation.DESCRIBE, Resource.topic("orders"))).isFalse();
    }

    @Test
    void invalidScopesAreRefusedNamingThem() {
        for (String bad : new String[]{"produce", "produce:orders", "produce:group:g", "commit:topic:t", "fly:topic:t",
                "admin:topic:t", "fetch:topic:a*b", "fetch:topic:", "fetch:queue:q", "fetch:topic:a/b"}) {
            assertThatThrownBy(() -> Scopes.parse("fetch:topic:ok " + bad)).as(bad)
                    .isInstanceOf(InvalidScopeException.class).hasMessageContaining(bad);
        }
    }

    @Test
    void lenientParsingSkipsOtherAudiencesScopes() {
        Scopes s = Scopes.parseLenient("openid email produce:topic:orders");
        assertThat(s.list()).hasSize(1);
        assertThat(s.toString()).isEqualTo("produce:topic:orders");
    }

    @Test
    void scopesPrintAsParsed() {
        String text = "produce:topic:orders* fetch:topic:x read:group:* admin:cluster";
        assertThat(Scopes.parse(text).toString()).isEqualTo(text);
    }

    @Test
    void authorizerNamesTheReason() {
        Authorizer az = new Authorizer();
        Principal p = new Principal("token:x", Scopes.parse("fetch:topic:orders"));
        assertThat(az.authorize(p, Operation.FETCH, Resource.topic("orders")).allowed()).isTrue();
        assertThat(az.authorize(p, Operation.PRODUCE, Resource.topic("orders")).reason())
                .isEqualTo("no scope grants produce on topic:orders");
        assertThat(az.authorize(p, Operation.PRODUCE, Resource.topic("orders")).resource()).isEqualTo("topic:orders");
        assertThat(az.authorize(p, Operation.FETCH, Resource.topic("__consumer_offsets")).reason())
                .contains("internal");
        assertThat(az.authorize(p, Operation.ADMIN, Resource.CLUSTER).reason()).contains("admin:cluster");
    }

    @Test
    void authorizerNamesADenialAsTheReason(@TempDir Path dir) {
        GrantStore grants = new GrantStore(dir, new ManualClock(0), new Secrets(new SecureRandom()));
        grants.add(new GrantStore.Grant("token:x", Scope.parse("fetch:topic:orders"), true));
        Principal p = new Principal("token:x", Scopes.parse("fetch:topic:orders")).withGrants(grants);
        assertThat(new Authorizer().authorize(p, Operation.FETCH, Resource.topic("orders")).reason())
                .isEqualTo("a grant denies fetch on topic:orders (a DENY ACL)");
    }
}
