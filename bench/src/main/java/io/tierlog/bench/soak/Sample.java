package io.tierlog.bench.soak;

import java.util.Locale;

/**
 * One 10-second sample of the soak: the service process as Linux and the JVM see it, and the load of the
 * interval that ended. Sizes in MiB, latencies in ms, rates per second; NaN or -1 where not measured. The
 * {@code nmt*} figures are the JVM's native memory tracking (committed), taken with each full GC when the soak runs
 * with {@code --nmt}; {@code nmtMallocLikeMib} is Internal + Symbol + Arena Chunk.
 */
public record Sample(double elapsedSeconds, String utc, double rssMib, double heapUsedMib, double heapAfterGcMib,
                     double liveAfterFullGcMib, int gcPauses, double directMib, double nettyDirectMib, long openFiles,
                     long threads, double produceP99Ms, double fetchP99Ms, double producedPerSecond,
                     double tailReadPerSecond, double replayPerSecond, double longPollPerSecond,
                     double streamPerSecond, long errors, long serverErrors, long s3Objects, double load1,
                     double nmtNonHeapMib, double nmtCodeMib, double nmtClassMib, double nmtThreadMib,
                     double nmtGcMib, double nmtOtherMib, double nmtMallocLikeMib, double rssHeapMappingMib) {

    public static final String CSV_HEADER = "elapsed_s,utc,rss_mib,heap_used_mib,heap_after_gc_mib,"
            + "live_after_full_gc_mib,gc_pauses,direct_mib,netty_direct_mib,open_files,threads,produce_p99_ms,"
            + "fetch_p99_ms,produced_rps,tail_read_rps,replay_rps,long_poll_rps,stream_rps,errors,server_errors,"
            + "s3_objects,load1,nmt_nonheap_mib,nmt_code_mib,nmt_class_mib,nmt_thread_mib,nmt_gc_mib,nmt_other_mib,"
            + "nmt_internal_symbol_arena_mib,rss_heap_mib";

    public String csv() {
        return String.format(Locale.ROOT, "%.0f,%s,%.1f,%.1f,%s,%s,%d,%s,%s,%d,%d,%s,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%d,%d,%d,%.2f,%s,%s,%s,%s,%s,%s,%s,%s",
                elapsedSeconds, utc, rssMib, heapUsedMib, num(heapAfterGcMib), num(liveAfterFullGcMib), gcPauses,
                num(directMib), num(nettyDirectMib), openFiles, threads, num(produceP99Ms), num(fetchP99Ms),
                producedPerSecond, tailReadPerSecond, replayPerSecond, longPollPerSecond, streamPerSecond, errors,
                serverErrors, s3Objects, load1, num(nmtNonHeapMib), num(nmtCodeMib), num(nmtClassMib),
                num(nmtThreadMib), num(nmtGcMib), num(nmtOtherMib), num(nmtMallocLikeMib), num(rssHeapMappingMib));
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.1f", v);
    }
}
