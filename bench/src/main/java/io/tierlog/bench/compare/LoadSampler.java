package io.tierlog.bench.compare;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Samples the 1-minute load average ({@code /proc/loadavg}, what {@code uptime} prints) every few seconds while a
 * benchmark runs, so its report can state the load the numbers were measured under: on a shared 2-core machine a
 * run at load 6 and one at load 1 are not the same experiment. Thread-safe; the sampler is a daemon thread.
 */
public final class LoadSampler implements AutoCloseable {
    private static final long PERIOD_MILLIS = 5_000;

    private final List<Double> samples = new ArrayList<>();
    private final Thread thread;
    private volatile boolean stopped;

    private LoadSampler() {
        thread = new Thread(this::loop, "load-sampler");
        thread.setDaemon(true);
    }

    /** Starts sampling now (the first sample is taken at once). */
    public static LoadSampler start() {
        LoadSampler s = new LoadSampler();
        s.sample();
        s.thread.start();
        return s;
    }

    private void loop() {
        while (!stopped) {
            try {
                Thread.sleep(PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            sample();
        }
    }

    private void sample() {
        String line = MachineInfo.loadAverage();
        try {
            double oneMinute = Double.parseDouble(line.split("\\s+")[0]);
            synchronized (samples) {
                samples.add(oneMinute);
            }
        } catch (RuntimeException unreadable) {
            // no /proc/loadavg (not Linux): the summary says there were no samples
        }
    }

    /** E.g. "1-min load average 2.10-5.30 (median 3.90, 25 samples every 5 s)". */
    public String summary() {
        List<Double> copy;
        synchronized (samples) {
            copy = new ArrayList<>(samples);
        }
        if (copy.isEmpty()) {
            return "load average not available";
        }
        copy.sort(null);
        return String.format(Locale.ROOT, "1-min load average %.2f-%.2f (median %.2f, %d samples every %d s)",
                copy.get(0), copy.get(copy.size() - 1), copy.get(copy.size() / 2), copy.size(), PERIOD_MILLIS / 1000);
    }

    @Override
    public void close() {
        stopped = true;
        thread.interrupt();
    }
}
