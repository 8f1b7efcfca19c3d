package io.tierlog.bench.soak;

import java.util.Locale;

/**
 * One 10-second sample of the soak: the service process as Linux and the JVM see it, and the load of the
 * interval that ended. Sizes in MiB, latencies in ms, rates per second; NaN or -1 where not measured.
 */
public record Sample(double elapsedSeconds, String utc, double rssMib, double heapUsedMib, double heapAfterGcMib,
                     double liveAfterFullGcMib, int gcPauses, double directMib, double nettyDirectMib, long openFiles,
                     long threads, double produceP99Ms, double fetchP99Ms, double producedPerSecond,
                     double tailReadPerSecond, double replayPerSecond, double longPollPerSecond,
                     double streamPerSecond, long errors, long serverErrors, long s3Objects, double load1) {

    public static final String CSV_HEADER = "elapsed_s,utc,rss_mib,heap_used_mib,heap_after_gc_mib,"
            + "live_after_full_gc_mib,gc_pauses,direct_mib,netty_direct_mib,open_files,threads,produce_p99_ms,"
            + "fetch_p99_ms,produced_rps,tail_read_rps,replay_rps,long_poll_rps,stream_rps,errors,server_errors,"
            + "s3_objects,load1";

    public String csv() {
        return String.format(Locale.ROOT, "%.0f,%s,%.1f,%.1f,%s,%s,%d,%s,%s,%d,%d,%s,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%d,%d,%d,%.2f",
                elapsedSeconds, utc, rssMib, heapUsedMib, num(heapAfterGcMib), num(liveAfterFullGcMib), gcPauses,
                num(directMib), num(nettyDirectMib), openFiles, threads, num(produceP99Ms), num(fetchP99Ms),
                producedPerSecond, tailReadPerSecond, replayPerSecond, longPollPerSecond, streamPerSecond, errors,
                serverErrors, s3Objects, load1);
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.1f", v);
    }
}
