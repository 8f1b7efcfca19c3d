package io.tierlog.service.quota;

import io.tierlog.access.Secrets;
import io.tierlog.service.quota.QuotaOverrides.Kind;
import io.tierlog.service.quota.QuotaOverrides.Rate;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.security.SecureRandom;

import static org.assertj.core.api.Assertions.assertThat;

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
}
