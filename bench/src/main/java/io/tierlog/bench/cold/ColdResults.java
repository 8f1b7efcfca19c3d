package io.tierlog.bench.cold;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Every sample of a {@code cold} run, by injected latency and reader, and the fill phase. Not thread-safe. */
final class ColdResults {
    enum Reader {
        SSE("sse", "SSE stream (index-service)", true),
        FETCH("fetch", "paged fetch (index-service)", true),
        BATCH_STREAM("batch-stream", "binary stream, record batches (index-service)", true),
        BATCH_FETCH("batch-fetch", "binary paged fetch, record batches (index-service)", true),
        RAW("raw", "raw ranged GETs, read-ahead's concurrency", false),
        RAW_RANGES("raw-ranges", "raw ranged GETs of range-bytes, read-ahead's bytes in flight", false),
        SERIAL("serial", "raw ranged GETs, one at a time", false);

        /** The name on the command line ({@code --readers}). */
        final String option;
        final String label;
        /** Whether it reads through the index-service (one long-running service) rather than S3 directly. */
        final boolean http;

        Reader(String option, String label, boolean http) {
            this.option = option;
            this.label = label;
            this.http = http;
        }

        /** The HTTP reader named {@code option} on the command line. */
        static Reader httpReader(String option) {
            for (Reader r : values()) {
                if (r.http && r.option.equals(option)) {
                    return r;
                }
            }
            throw new IllegalArgumentException("unknown HTTP reader '" + option + "' (sse, fetch, batch-stream, "
                    + "batch-fetch)");
        }
    }

    /** The fill phase: what was produced, how long until cold, and the S3 requests that took. */
    record Fill(long records, long produceNanos, long untilColdNanos, JsonNode state, CountingS3.Counts s3) {
    }

    private final Map<Integer, Map<Reader, List<Replay>>> samples = new TreeMap<>();
    private final List<String> notes = new ArrayList<>();
    private Fill fill;

    /** Something the reader of the report must know, e.g. a measurement that failed and why. */
    void note(String note) {
        notes.add(note);
    }

    List<String> notes() {
        return notes;
    }

    void fill(long records, long produceNanos, long untilColdNanos, JsonNode state, CountingS3.Counts counts) {
        this.fill = new Fill(records, produceNanos, untilColdNanos, state, counts);
    }

    Fill fill() {
        return fill;
    }

    void add(int latencyMs, Reader reader, Replay replay) {
        samples.computeIfAbsent(latencyMs, l -> new EnumMap<>(Reader.class))
                .computeIfAbsent(reader, r -> new ArrayList<>()).add(replay);
    }

    Map<Integer, Map<Reader, List<Replay>>> samples() {
        return samples;
    }

    /**
     * The median sample by wall time (the lower middle for an even count), with the median time to first record
     * of all samples put in its place; its S3 counts are its own. Null when there is none.
     */
    Replay median(int latencyMs, Reader reader) {
        List<Replay> list = samples.getOrDefault(latencyMs, Map.of()).get(reader);
        if (list == null || list.isEmpty()) {
            return null;
        }
        List<Replay> byTime = new ArrayList<>(list);
        byTime.sort(Comparator.comparingLong(Replay::nanos));
        List<Long> firsts = list.stream().map(Replay::firstNanos).sorted().toList();
        Replay mid = byTime.get((byTime.size() - 1) / 2);
        return new Replay(mid.nanos(), firsts.get((firsts.size() - 1) / 2), mid.records(), mid.valueBytes(),
                mid.objectBytes(), mid.s3(), mid.service(), mid.cpu());
    }
}
