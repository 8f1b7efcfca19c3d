package io.tierlog.service.quota;

import io.tierlog.access.Secrets;
import io.tierlog.service.quota.QuotaOverrides.Entity;
import io.tierlog.service.quota.QuotaOverrides.Kind;
import io.tierlog.service.quota.QuotaOverrides.Rate;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.OptionalLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Rates set per principal and for every principal, on the volume two instances share. */
class QuotaOverridesTest {
    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock(1_000_000);

    QuotaOverrides store() {
        return new QuotaOverrides(dir, clock, new Secrets(new SecureRandom()));
    }

    @Test
    void aPrincipalsOwnRateBeatsTheDefaultWhichReachesEveryoneElse() {
        QuotaOverrides rates = store();
        assertThat(rates.rate(Kind.PRODUCE, "token:a")).isEmpty();
        rates.set(new Rate(QuotaOverrides.DEFAULT, Kind.PRODUCE, 1000));
        rates.set(new Rate("token:a", Kind.PRODUCE, 5000));
        assertThat(rates.rate(Kind.PRODUCE, "token:a")).hasValue(5000);
        assertThat(rates.rate(Kind.PRODUCE, "token:b")).hasValue(1000);
        assertThat(rates.rate(Kind.PRODUCE, null)).as("a caller counted by address").hasValue(1000);
        assertThat(rates.rate(Kind.FETCH, "token:a")).as("another kind").isEmpty();
        rates.set(new Rate("token:a", Kind.PRODUCE, 7000));
        assertThat(rates.rate(Kind.PRODUCE, "token:a")).as("replaced").hasValue(7000);
        assertThat(rates.remove("token:a", Kind.PRODUCE)).isTrue();
        assertThat(rates.remove("token:a", Kind.PRODUCE)).isFalse();
        assertThat(rates.rate(Kind.PRODUCE, "token:a")).hasValue(1000);
    }

    /** Kafka's order of quota entities, most specific first, and a default's bucket per user or client id. */
    @Test
    void aCallersBytesCountInTheBucketOfTheFirstEntityWithARateInKafkasOrder() {
        QuotaOverrides rates = store();
        String a = "principal:token:a";
        String b = "principal:token:b";
        assertThat(rates.bucket(Kind.PRODUCE, a, "token:a", "app")).as("nothing set").isEqualTo(a);

        rates.set(new Rate(new Entity(null, QuotaOverrides.DEFAULT), Kind.PRODUCE, 100));
        String app = rates.bucket(Kind.PRODUCE, a, "token:a", "app");
        assertThat(app).isNotEqualTo(a);
        assertThat(rates.bucket(Kind.PRODUCE, b, "token:b", "app")).as("a client id's bucket, every user's")
                .isEqualTo(app);
        assertThat(rates.bucket(Kind.PRODUCE, a, "token:a", "other")).as("each client id its own").isNotEqualTo(app);
        assertThat(rate(rates, app)).hasValue(100);
        rates.set(new Rate(new Entity(null, "app"), Kind.PRODUCE, 200));
        assertThat(rate(rates, app)).as("the client id's own beats the default client id's").hasValue(200);
        assertThat(rates.bucket(Kind.PRODUCE, a, "token:a", null)).as("no client id (HTTP)").isEqualTo(a);
        assertThat(rates.bucket(Kind.FETCH, a, "token:a", "app")).as("another kind").isEqualTo(a);

        rates.set(new Rate(QuotaOverrides.DEFAULT, Kind.PRODUCE, 300));
        assertThat(rates.bucket(Kind.PRODUCE, a, "token:a", "app")).as("the default user beats client ids alone")
                .isEqualTo(a);
        assertThat(rates.rate(Kind.PRODUCE, "token:a")).hasValue(300);

        rates.set(new Rate(new Entity(QuotaOverrides.DEFAULT, "app"), Kind.PRODUCE, 400));
        String aApp = rates.bucket(Kind.PRODUCE, a, "token:a", "app");
        assertThat(aApp).isNotIn(a, app);
        assertThat(rates.bucket(Kind.PRODUCE, b, "token:b", "app")).as("per user and client id").isNotEqualTo(aApp);
        assertThat(rate(rates, aApp)).hasValue(400);

        rates.set(new Rate("token:a", Kind.PRODUCE, 500));
        assertThat(rates.bucket(Kind.PRODUCE, a, "token:a", "app")).as("a user's own beats the default user's")
                .isEqualTo(a);
        assertThat(rates.bucket(Kind.PRODUCE, b, "token:b", "app")).isNotEqualTo(b);

        rates.set(new Rate(new Entity("token:a", "app"), Kind.PRODUCE, 600));
        assertThat(rates.bucket(Kind.PRODUCE, a, "token:a", "app")).isEqualTo(aApp);
        assertThat(rate(rates, aApp)).as("the user with the client id first").hasValue(600);
        assertThat(rates.remove(new Entity("token:a", "app"), Kind.PRODUCE)).isTrue();
        assertThat(rate(rates, aApp)).as("then the default user with it").hasValue(400);
        assertThat(store().list()).as("read afresh from the volume").hasSize(5);
    }

    private static OptionalLong rate(QuotaOverrides rates, String bucket) {
        return rates.clientRate(Kind.PRODUCE, bucket,
                key -> key.startsWith("principal:") ? key.substring("principal:".length()) : null);
    }

    @Test
    void anotherInstanceSeesAChangedRateAtItsNextRefresh() {
        QuotaOverrides a = store();
        QuotaOverrides b = store();
        a.set(new Rate("jwt:app", Kind.FETCH, 1000));
        b.refresh();
        assertThat(b.rate(Kind.FETCH, "jwt:app")).hasValue(1000);
        // The same size and, often, the same modification time: the rename gives the file a new inode.
        a.set(new Rate("jwt:app", Kind.FETCH, 2000));
        b.refresh();
        assertThat(b.rate(Kind.FETCH, "jwt:app")).hasValue(2000);
        a.remove("jwt:app", Kind.FETCH);
        b.refresh();
        assertThat(b.rate(Kind.FETCH, "jwt:app")).isEmpty();
        assertThat(store().list()).isEmpty();
    }

    @Test
    void anIpEntityHasOnlyTheConnectionRateWithItsOwnBeatingTheDefault() {
        QuotaOverrides rates = store();
        assertThat(rates.connectionRate("10.0.0.1")).isEmpty();
        rates.set(new Rate(Entity.ip(QuotaOverrides.DEFAULT), Kind.CONNECTION, 10));
        rates.set(new Rate(Entity.ip("10.0.0.1"), Kind.CONNECTION, 2));
        assertThat(rates.connectionRate("10.0.0.1")).hasValue(2);
        assertThat(rates.connectionRate("10.0.0.2")).as("the default ip's").hasValue(10);
        assertThat(store().connectionRate("10.0.0.1")).as("another instance").hasValue(2);
        assertThat(rates.rate(Kind.CONNECTION, "10.0.0.1")).as("no user of that name").isEmpty();
        assertThatThrownBy(() -> new Rate(Entity.ip("10.0.0.1"), Kind.PRODUCE, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Rate("token:a", Kind.CONNECTION, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Entity("token:a", null, "10.0.0.1")).isInstanceOf(IllegalArgumentException.class);
        rates.remove(Entity.ip("10.0.0.1"), Kind.CONNECTION);
        assertThat(rates.connectionRate("10.0.0.1")).hasValue(10);
    }

    /** Files written when every rate was a byte rate name it {@code bytesPerSecond}. */
    @Test
    void ratesStoredBeforeOtherUnitsAreReadAsTheyWere() throws IOException {
        store().set(new Rate("token:a", Kind.PRODUCE, 1234));
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                String json = Files.readString(f);
                assertThat(json).contains("\"perSecond\"");
                Files.writeString(f, json.replace("\"perSecond\"", "\"bytesPerSecond\""));
            }
        }
        assertThat(store().rate(Kind.PRODUCE, "token:a")).hasValue(1234);
    }
}
