package io.tierlog.access;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** The background re-read of a store on the shared volume, so other instances' changes reach this one. */
final class Refresher {
    private Refresher() {
    }

    /**
     * Runs {@code refresh} every {@code period} on a daemon thread named {@code thread}; a failed run is logged and
     * the store keeps its previous view. Shut the returned executor down to stop.
     */
    static ScheduledExecutorService every(Duration period, String thread, Runnable refresh, System.Logger log,
                                          String what) {
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, thread);
            t.setDaemon(true);
            return t;
        });
        s.scheduleWithFixedDelay(() -> {
            try {
                refresh.run();
            } catch (RuntimeException e) {
                log.log(System.Logger.Level.WARNING, what + " refresh failed; keeping the previous view", e);
            }
        }, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
        return s;
    }
}
