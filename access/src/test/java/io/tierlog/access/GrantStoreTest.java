package io.tierlog.access;

import io.tierlog.access.GrantStore.Grant;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class GrantStoreTest {
    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock(1_000_000);

    GrantStore store() {
        return new GrantStore(dir, clock, new Secrets(new SecureRandom()));
    }

    static Grant grant(String principal, String scope) {
        return new Grant(principal, Scope.parse(scope));
    }

    @Test
    void aGrantAddsToAPrincipalsScopesAndItsRemovalReachesAnOpenPrincipal() {
        GrantStore grants = store();
        Principal caller = new Principal("token:a", Scopes.parse("fetch:topic:orders")).withGrants(grants);
        Resource payments = Resource.topic("payments");
        assertThat(caller.allows(Operation.PRODUCE, payments)).isFalse();

        assertThat(grants.add(grant("token:a", "produce:topic:pay*"))).isTrue();
        assertThat(grants.add(grant("token:a", "produce:topic:pay*"))).as("already there").isFalse();
        assertThat(caller.allows(Operation.PRODUCE, payments)).isTrue();
        assertThat(caller.allows(Operation.PRODUCE, Resource.topic("orders"))).isFalse();
        assertThat(new Principal("token:b", Scopes.NONE).withGrants(grants).allows(Operation.PRODUCE, payments))
                .as("another principal").isFalse();

        assertThat(grants.remove(grant("token:a", "produce:topic:pay*"))).isTrue();
        assertThat(grants.remove(grant("token:a", "produce:topic:pay*"))).isFalse();
        assertThat(caller.allows(Operation.PRODUCE, payments)).isFalse();
        assertThat(caller.allows(Operation.FETCH, Resource.topic("orders"))).as("its own scopes stay").isTrue();
    }

    @Test
    void everyPrincipalsGrantsReachEachCallerButNotTheInternalTopics() {
        GrantStore grants = store();
        grants.add(grant(GrantStore.EVERY_PRINCIPAL, "fetch:topic:*"));
        Principal caller = new Principal("jwt:alice", Scopes.NONE).withGrants(grants);
        assertThat(caller.allows(Operation.FETCH, Resource.topic("anything"))).isTrue();
        assertThat(caller.allows(Operation.FETCH, Resource.topic("__consumer_offsets"))).isFalse();
        assertThat(caller.hasScopes()).isTrue();
        assertThat(new Principal("jwt:alice", Scopes.NONE).hasScopes()).as("without the store").isFalse();
    }

    @Test
    void anotherInstanceSeesAddsAndRemovalsAfterItsRefreshAndARestartKeepsThem() {
        GrantStore a = store();
        GrantStore b = store();
        Principal onB = new Principal("cert:CN=app", Scopes.NONE).withGrants(b);
        a.add(grant("cert:CN=app", "read:group:billing"));
        assertThat(onB.allows(Operation.READ, Resource.group("billing"))).as("before b re-reads").isFalse();
        b.refresh();
        assertThat(onB.allows(Operation.READ, Resource.group("billing"))).isTrue();

        b.remove(grant("cert:CN=app", "read:group:billing"));
        a.add(grant("cert:CN=app", "commit:group:billing"));
        clock.advanceMillis(999);
        a.refreshIfOlderThan(Duration.ofSeconds(1));
        assertThat(a.list()).as("not re-read yet").hasSize(2);
        clock.advanceMillis(1);
        a.refreshIfOlderThan(Duration.ofSeconds(1));
        assertThat(a.list()).containsExactly(grant("cert:CN=app", "commit:group:billing"));
        assertThat(store().list()).as("read afresh from the volume")
                .containsExactly(grant("cert:CN=app", "commit:group:billing"));
    }

    @Test
    void aDenialWinsOverTheTokensScopesAndGrantsUntilItIsRemovedOnEveryInstance() {
        GrantStore a = store();
        GrantStore b = store();
        Principal caller = new Principal("token:a", Scopes.parse("produce:topic:orders*")).withGrants(a);
        Principal onB = new Principal("token:a", Scopes.parse("produce:topic:orders*")).withGrants(b);
        Resource secret = Resource.topic("orders-secret");
        a.add(grant("token:a", "fetch:topic:orders-secret"));
        Grant deny = new Grant("token:a", Scope.parse("produce:topic:orders-secret"), true);

        assertThat(a.add(deny)).isTrue();
        assertThat(a.add(deny)).as("already there").isFalse();
        assertThat(caller.allows(Operation.PRODUCE, secret)).as("its token's prefix allows it").isFalse();
        assertThat(caller.allows(Operation.PRODUCE, Resource.topic("orders-public"))).isTrue();
        assertThat(caller.allows(Operation.DESCRIBE, secret)).as("denying produce leaves describe").isTrue();
        assertThat(caller.allows(Operation.FETCH, secret)).as("its grant to fetch stays").isTrue();
        assertThat(a.list()).filteredOn(Grant::deny).containsExactly(deny);
        assertThat(onB.allows(Operation.PRODUCE, secret)).as("before b re-reads").isTrue();
        b.refresh();
        assertThat(onB.allows(Operation.PRODUCE, secret)).isFalse();
        assertThat(store().deniedOf("token:a").list()).as("read afresh from the volume")
                .containsExactly(deny.scope());

        // Allowing the same scope is another grant (another file); the denial still wins until it is removed.
        a.add(grant("token:a", "produce:topic:orders-secret"));
        assertThat(caller.allows(Operation.PRODUCE, secret)).isFalse();
        assertThat(a.remove(deny)).isTrue();
        assertThat(caller.allows(Operation.PRODUCE, secret)).isTrue();
        b.refresh();
        assertThat(onB.allows(Operation.PRODUCE, secret)).isTrue();
    }

    @Test
    void aDenialToEveryPrincipalOfEveryTopicReachesEachCallerAndTheirListings() {
        GrantStore grants = store();
        Principal caller = new Principal("jwt:alice", Scopes.parse("fetch:topic:logs")).withGrants(grants);
        assertThat(caller.allowsSome(Operation.FETCH, Resource.Kind.TOPIC)).isTrue();
        grants.add(new Grant(GrantStore.EVERY_PRINCIPAL, Scope.parse("fetch:topic:*"), true));
        assertThat(caller.allows(Operation.FETCH, Resource.topic("logs"))).isFalse();
        assertThat(caller.allowsSome(Operation.FETCH, Resource.Kind.TOPIC)).isFalse();
        assertThat(new Principal("bootstrap", Scopes.of(Scope.ADMIN)).allows(Operation.FETCH, Resource.topic("logs")))
                .as("a principal without the store (the bootstrap administrator)").isTrue();
    }

    @Test
    void aFileThatIsNotItsGrantIsSkipped() throws Exception {
        GrantStore grants = store();
        grants.add(grant("token:a", "fetch:topic:orders"));
        Path file;
        try (Stream<Path> files = Files.list(dir)) {
            file = files.filter(f -> !f.getFileName().toString().startsWith(".")).findFirst().orElseThrow();
        }
        // A file whose content is not the grant its name says (an edit, a copy under another name) grants nothing.
        Files.writeString(file, Files.readString(file).replace("fetch:topic:orders", "admin:cluster"));
        Files.writeString(dir.resolve("broken.json"), "{not json");
        // A denial's file turned into an allowing one (its effect removed) no longer matches its name either.
        grants.add(new Grant("token:a", Scope.parse("produce:topic:orders"), true));
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(f -> Files.isRegularFile(f) && !f.getFileName().toString().startsWith("."))
                    .toList()) {
                Files.writeString(f, Files.readString(f).replace(",\"effect\":\"deny\"", ""));
            }
        }
        GrantStore reread = store();
        assertThat(reread.list()).isEmpty();
        assertThat(reread.scopesOf("token:a").list()).isEqualTo(List.of());
    }

    @Test
    void aGrantForOneHostHoldsForCallersFromThatAddressOnly() {
        GrantStore grants = store();
        Principal base = new Principal("token:a", Scopes.parse("describe:topic:orders")).withGrants(grants);
        Principal fromHost = base.at("10.0.0.7");
        Principal fromElsewhere = base.at("10.0.0.8");
        Resource orders = Resource.topic("orders");
        Grant produceFromHost = new Grant("token:a", Scope.parse("produce:topic:orders"), false, "10.0.0.7");
        assertThat(grants.add(produceFromHost)).isTrue();
        assertThat(fromHost.allows(Operation.PRODUCE, orders)).isTrue();
        assertThat(fromElsewhere.allows(Operation.PRODUCE, orders)).isFalse();
        assertThat(base.allows(Operation.PRODUCE, orders)).as("no address (Lambda)").isFalse();

        assertThat(grants.add(new Grant(GrantStore.EVERY_PRINCIPAL, Scope.parse("describe:topic:orders"), true,
                "10.0.0.8"))).isTrue();
        assertThat(fromElsewhere.allows(Operation.DESCRIBE, orders)).as("User:* denied from that host").isFalse();
        assertThat(fromHost.allows(Operation.DESCRIBE, orders)).isTrue();

        assertThat(grants.add(grant("token:a", "produce:topic:orders"))).as("the same grant from every host is another")
                .isTrue();
        assertThat(grants.remove(produceFromHost)).isTrue();
        assertThat(fromElsewhere.allows(Operation.PRODUCE, orders)).isTrue();
        assertThat(store().list()).as("a fresh store reads hosts back")
                .extracting(Grant::host).containsExactly("10.0.0.8", null);
    }
}
