package io.tierlog.bench.compare;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs N workers that start together and times them: from the common start to the last worker's end. Setup
 * (clients, connections) happens before, outside the timed section. A worker's failure fails the whole run.
 */
public final class Workers {
    private Workers() {
    }

    /** One worker's body; {@code startNanos} is the common start on the {@link System#nanoTime()} clock. */
    @FunctionalInterface
    public interface Body {
        void run(int worker, long startNanos) throws Exception;
    }

    /** Runs {@code count} workers concurrently and returns the elapsed nanoseconds. */
    public static long runTimed(int count, Body body) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(count, r -> {
            Thread t = new Thread(r, "bench-worker");
            t.setDaemon(true);
            return t;
        });
        try {
            CountDownLatch ready = new CountDownLatch(count);
            CountDownLatch go = new CountDownLatch(1);
            long[] start = new long[1];
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int worker = i;
                futures.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    body.run(worker, start[0]);
                    return null;
                }));
            }
            ready.await();
            start[0] = System.nanoTime();
            go.countDown(); // the latch publishes start[0] to the workers
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    futures.forEach(other -> other.cancel(true));
                    if (e.getCause() instanceof Exception ex) {
                        throw ex;
                    }
                    throw e;
                }
            }
            return System.nanoTime() - start[0];
        } finally {
            pool.shutdownNow();
        }
    }
}
