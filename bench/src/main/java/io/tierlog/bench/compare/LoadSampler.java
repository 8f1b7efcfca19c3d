package io.tierlog.bench.compare;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Samples the 1-minute load average ({@code /proc/loadavg}, what {@code uptime} prints) and the CPU steal
 * ({@code /proc/stat}: time the hypervisor ran other guests on this VM's CPUs) every few seconds while a benchmark
 * runs, so its report can state what the numbers were measured under: on a shared 2-core machine a run at load 6, or
 * with a fifth of its CPU stolen, and one at load 1 are not the same experiment. Thread-safe; the sampler is a daemon
 * thread.
 */
public final class LoadSampler implements AutoCloseable {
    private static final long PERIOD_MILLIS = 5_000;

    private final List<Double> samples = new ArrayList<>();
    /** The steal fraction of each period between two samples. */
    private final List<Double> stealSamples = new ArrayList<>();
    private final CpuTicks first;
    private CpuTicks last;
    private final Thread thread;
    private volatile boolean stopped;

    private LoadSampler() {
        first = CpuTicks.now();
        last = first;
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
        CpuTicks now = CpuTicks.now();
        synchronized (samples) {
            if (last != null && now != null && now.total() > last.total()) {
                stealSamples.add(now.stealSince(last));
            }
            last = now;
        }
    }

    /**
     * E.g. "1-min load average 2.10-5.30 (median 3.90, 25 samples every 5 s); CPU steal 4% of the run (5-s periods
     * 0-19%, median 3%)".
     */
    public String summary() {
        List<Double> load;
        List<Double> steal;
        synchronized (samples) {
            load = new ArrayList<>(samples);
            steal = new ArrayList<>(stealSamples);
        }
        CpuTicks now = CpuTicks.now();
        double wholeRun = first == null || now == null || now.total() <= first.total() ? Double.NaN
                : now.stealSince(first);
        return summary(load, steal, wholeRun);
    }

    /** The summary of these samples; the steal part only where there is a steal figure for the run and a period. */
    static String summary(List<Double> load, List<Double> steal, double wholeRunSteal) {
        List<Double> l = new ArrayList<>(load);
        List<Double> st = new ArrayList<>(steal);
        l.sort(null);
        st.sort(null);
        String text = l.isEmpty() ? "load average not available"
                : String.format(Locale.ROOT, "1-min load average %.2f-%.2f (median %.2f, %d samples every %d s)",
                        l.get(0), l.get(l.size() - 1), l.get(l.size() / 2), l.size(), PERIOD_MILLIS / 1000);
        if (Double.isNaN(wholeRunSteal) || st.isEmpty()) {
            return text;
        }
        return text + String.format(Locale.ROOT, "; CPU steal %.0f%% of the run (%d-s periods %.0f-%.0f%%, median "
                + "%.0f%%)", 100 * wholeRunSteal, PERIOD_MILLIS / 1000, 100 * st.get(0), 100 * st.get(st.size() - 1),
                100 * st.get(st.size() / 2));
    }

    /**
     * The machine's CPU time so far from the {@code cpu} line of {@code /proc/stat}, in clock ticks: all of it
     * (user through steal) and the steal alone.
     */
    record CpuTicks(long total, long steal) {
        static CpuTicks now() {
            try {
                return parse(Files.readString(Path.of("/proc/stat")));
            } catch (IOException | RuntimeException e) {
                return null; // not Linux: no steal in the summary
            }
        }

        /** Parses the first line: "cpu user nice system idle iowait irq softirq steal guest guest_nice". */
        static CpuTicks parse(String procStat) {
            String[] f = procStat.lines().findFirst().orElseThrow().trim().split("\\s+");
            if (!f[0].equals("cpu") || f.length < 9) {
                throw new IllegalArgumentException("not a /proc/stat cpu line: " + f[0]);
            }
            long total = 0;
            for (int i = 1; i <= 8; i++) { // guest time is already counted in user and nice
                total += Long.parseLong(f[i]);
            }
            return new CpuTicks(total, Long.parseLong(f[8]));
        }

        /** The fraction of the CPU time since {@code before} that was stolen. */
        double stealSince(CpuTicks before) {
            return (double) (steal - before.steal) / (total - before.total);
        }
    }

    @Override
    public void close() {
        stopped = true;
        thread.interrupt();
    }
}
