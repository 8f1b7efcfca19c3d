package io.tierlog.bench.cold;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Renders a {@code cold} run as JSON (every sample) and as the Markdown block of docs/BENCHMARKS.md. Immutable. */
final class ColdReport {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    /** Issue #27's targets. */
    private static final double TARGET_VS_RAW = 0.90;
    private static final double TARGET_VS_SERIAL = 5.0;

    private final ColdResults results;
    private final Map<String, String> machine;
    private final Map<String, Object> settings;
    private final String timestamp;

    ColdReport(ColdResults results, Map<String, String> machine, Map<String, Object> settings, String timestamp) {
        this.results = results;
        this.machine = machine;
        this.settings = settings;
        this.timestamp = timestamp;
    }

    String json() throws Exception {
        ObjectNode root = JSON.createObjectNode();
        root.put("benchmark", "tierlog-bench cold");
        root.put("timestamp", timestamp);
        root.set("settings", JSON.valueToTree(settings));
        root.set("machine", JSON.valueToTree(machine));
        ColdResults.Fill fill = results.fill();
        if (fill != null) {
            ObjectNode f = root.putObject("fill");
            f.put("records", fill.records());
            f.put("produceSeconds", fill.produceNanos() / 1e9);
            f.put("untilColdSeconds", fill.untilColdNanos() / 1e9);
            f.set("partitionState", fill.state());
            f.set("s3", counts(fill.s3()));
        }
        root.set("notes", JSON.valueToTree(results.notes()));
        ArrayNode latencies = root.putArray("latencies");
        results.samples().forEach((latency, byReader) -> {
            ObjectNode l = latencies.addObject();
            l.put("firstByteLatencyMs", latency);
            byReader.forEach((reader, list) -> {
                ObjectNode r = l.putObject(reader.name().toLowerCase(Locale.ROOT));
                r.put("label", reader.label);
                ArrayNode runs = r.putArray("runs");
                for (Replay s : list) {
                    ObjectNode o = runs.addObject();
                    o.put("seconds", s.nanos() / 1e9);
                    o.put("firstMs", s.firstMillis());
                    o.put("records", s.records());
                    o.put("valueBytes", s.valueBytes());
                    o.put("objectBytes", s.objectBytes());
                    o.put("objectMBps", s.objectMbps());
                    o.put("valueMBps", s.valueMbps());
                    o.set("s3", counts(s.s3()));
                    if (s.cpu() != null) {
                        o.put("serviceCpuSeconds", s.cpu().serviceSeconds());
                        o.put("benchmarkJvmCpuSeconds", s.cpu().benchmarkSeconds());
                    }
                    if (s.service() != null) {
                        o.set("serviceColdReadMetrics", JSON.valueToTree(s.service()));
                    }
                }
            });
        });
        return JSON.writeValueAsString(root);
    }

    private static ObjectNode counts(CountingS3.Counts c) {
        ObjectNode n = JSON.createObjectNode();
        if (c != null) {
            n.put("requests", c.requests());
            n.set("blobStoreCalls", JSON.valueToTree(c.calls()));
        }
        return n;
    }

    String markdown() {
        StringBuilder md = new StringBuilder();
        ColdResults.Fill fill = results.fill();
        long coldBytes = fill == null ? 0 : fill.state().path("coldBytes").asLong();
        md.append(String.format(Locale.ROOT, "Run %s, git `%s`, %s; load average %s at start, %s at end. "
                        + "Medians of %s runs.%n%n", timestamp, settings.get("git"),
                machine.getOrDefault("nproc", "?") + " × " + machine.getOrDefault("cpu", "?"),
                machine.get("loadavg at start"), machine.get("loadavg at end"), settings.get("runs")));
        if (fill != null) {
            md.append(String.format(Locale.ROOT, "Cold range replayed: offsets 0–%d (%,d records of %s-byte values), "
                            + "%d segment objects, %.1f MiB; segments of %d MiB; chunk %d KiB, read-ahead %s MiB in GETs of up to %s MiB, "
                            + "%s fetch threads (the raw reader keeps that many GETs in flight); paged fetches (JSON and "
                            + "binary) maxRecords=%s, maxBytes=%s. Binary readers: `Accept: "
                            + "application/vnd.tierlog.record-batches`, each batch CRC-checked and decoded with "
                            + "kafka-clients; MB/s (values) counts the same stored value bytes as the JSON readers.%n%n",
                    fill.state().path("hotStartOffset").asLong() - 1, fill.state().path("hotStartOffset").asLong(),
                    settings.get("valueBytes"), fill.state().path("segments").path("cold").asInt(),
                    coldBytes / 1048576.0, ((Number) settings.get("segmentBytes")).longValue() >> 20,
                    ((Number) settings.get("chunkBytes")).intValue() / 1024,
                    ((Number) settings.get("readAheadBytes")).longValue() >> 20,
                    ((Number) settings.get("rangeBytes")).longValue() >> 20,
                    settings.get("fetchThreads"), settings.get("fetchMaxRecords"), settings.get("fetchMaxBytes")));
        }
        md.append("| first-byte latency | reader | MB/s (segment bytes) | MB/s (values) | time to first record / GET "
                + "| S3 requests per GiB replayed (blob-store calls) |\n|---|---|---|---|---|---|\n");
        for (Integer latency : results.samples().keySet()) {
            for (ColdResults.Reader reader : ColdResults.Reader.values()) {
                Replay m = results.median(latency, reader);
                if (m == null) {
                    continue;
                }
                md.append(String.format(Locale.ROOT, "| %d ms | %s | %s | %s | %.0f ms | %s |%n", latency, reader.label,
                        range(latency, reader, m), m.valueBytes() > 0 ? String.format(Locale.ROOT, "%.1f", m.valueMbps()) : "–",
                        m.firstMillis(), m.s3() == null ? "?" : m.s3().perGibText(m.objectBytes())));
            }
        }
        md.append("\n| first-byte latency | SSE / raw (target ≥ 0.90) | SSE / serial (target ≥ 5) | fetch / raw "
                + "| binary stream / raw (target ≥ 0.90) | binary stream / serial (target ≥ 5) | binary fetch / raw "
                + "| binary stream / raw ranges |\n"
                + "|---|---|---|---|---|---|---|---|\n");
        for (Integer latency : results.samples().keySet()) {
            Replay sse = results.median(latency, ColdResults.Reader.SSE);
            Replay fetch = results.median(latency, ColdResults.Reader.FETCH);
            Replay batchStream = results.median(latency, ColdResults.Reader.BATCH_STREAM);
            Replay batchFetch = results.median(latency, ColdResults.Reader.BATCH_FETCH);
            Replay raw = results.median(latency, ColdResults.Reader.RAW);
            Replay serial = results.median(latency, ColdResults.Reader.SERIAL);
            Replay rawRanges = results.median(latency, ColdResults.Reader.RAW_RANGES);
            md.append(String.format(Locale.ROOT, "| %d ms | %s | %s | %s | %s | %s | %s | %s |%n", latency,
                    ratio(sse, raw, TARGET_VS_RAW), ratio(sse, serial, TARGET_VS_SERIAL), ratio(fetch, raw, 0),
                    ratio(batchStream, raw, TARGET_VS_RAW), ratio(batchStream, serial, TARGET_VS_SERIAL),
                    ratio(batchFetch, raw, 0), ratio(batchStream, rawRanges, 0)));
        }
        md.append("\nWhat the index-service saw during the median replays (its `/q/metrics`, after minus before):\n\n"
                + "| first-byte latency | reader | cold reads | time in cold reads | chunk cache hits / misses | ranged GETs |\n"
                + "|---|---|---|---|---|---|\n");
        for (Integer latency : results.samples().keySet()) {
            for (ColdResults.Reader reader : ColdResults.Reader.values()) {
                Replay m = results.median(latency, reader);
                if (!reader.http || m == null || m.service() == null) {
                    continue;
                }
                Map<String, Double> v = m.service();
                md.append(String.format(Locale.ROOT, "| %d ms | %s | %.0f | %.2f s of %.2f s | %.0f / %.0f | %.0f |%n",
                        latency, reader.label, v.get("tierlog_cold_read_seconds_count"),
                        v.get("tierlog_cold_read_seconds_sum"), m.nanos() / 1e9,
                        v.get("tierlog_cold_cache_hits_total"), v.get("tierlog_cold_cache_misses_total"),
                        v.get("tierlog_cold_range_gets_total")));
            }
        }
        cpuTable(md);
        if (fill != null) {
            md.append(String.format(Locale.ROOT, "%nS3 requests per GiB tiered: %s (from the topic's creation until "
                            + "it was cold, %.1f s, including the 1 s tiering and retention passes over both topics; "
                            + "%,d requests in all).%n",
                    fill.s3().perGibText(coldBytes), fill.untilColdNanos() / 1e9, fill.s3().requests()));
        }
        if (!results.notes().isEmpty()) {
            md.append("\nNotes:\n");
            results.notes().forEach(n -> md.append("- ").append(n.replace('|', '/')).append('\n'));
        }
        md.append(String.format(Locale.ROOT, "%nRatios compare wall times over the same segment bytes. MB/s: 10^6 "
                + "bytes/s. All HTTP replays went to one index-service, started after the fill with an empty index "
                + "directory and kept running, as a production service is: the HTTP readers first replayed a "
                + "separate %d MiB warm-up topic (unmeasured; larger than the chunk cache, so read from S3 each time) "
                + "in rounds until the service's JIT compiler was quiet (%s), then every measured replay read its own "
                + "topic, filled alike and never read before, so none of its chunks was in the chunk cache. The HTTP "
                + "readers took turns going first. HTTP readers: `HttpURLConnection`, keep-alive. Raw readers: "
                + "`S3ObjectStore` (AWS SDK v2, url-connection client, as in the service), bytes dropped, on the "
                + "objects of the run's last HTTP topic. Everything runs on this one machine and goes through the "
                + "latency proxy; S3Proxy serves from files the page cache holds.%n",
                ((Number) settings.get("warmupMib")).intValue(), settings.get("warmUp")));
        return md.toString();
    }

    /**
     * CPU per GiB replayed, by process, for the median replays: what each reader costs on the machine's cores,
     * which on a small machine that runs S3Proxy, the service and the reader together bounds what it can achieve.
     */
    private void cpuTable(StringBuilder md) {
        md.append("\nCPU seconds per GiB of segment objects during the median replays (`/proc/<pid>/stat`): the "
                + "index-service, and the benchmark's JVM, which holds S3Proxy, the latency proxy and the reader "
                + "(a raw reader's share is almost all S3Proxy's):\n\n"
                + "| first-byte latency | reader | index-service | benchmark JVM | both |\n|---|---|---|---|---|\n");
        for (Integer latency : results.samples().keySet()) {
            for (ColdResults.Reader reader : ColdResults.Reader.values()) {
                Replay m = results.median(latency, reader);
                double[] perGib = m == null ? null : m.cpuSecondsPerGib();
                if (perGib == null) {
                    continue;
                }
                md.append(String.format(Locale.ROOT, "| %d ms | %s | %.1f | %.1f | %.1f |%n", latency, reader.label,
                        perGib[0], perGib[1], perGib[0] + perGib[1]));
            }
        }
    }

    /** The median's MB/s, with the range of all runs when there are several. */
    private String range(int latency, ColdResults.Reader reader, Replay median) {
        List<Replay> all = results.samples().get(latency).get(reader);
        String m = String.format(Locale.ROOT, "%.1f", median.objectMbps());
        if (all.size() < 2) {
            return m;
        }
        double lo = all.stream().mapToDouble(Replay::objectMbps).min().orElse(0);
        double hi = all.stream().mapToDouble(Replay::objectMbps).max().orElse(0);
        return String.format(Locale.ROOT, "%s (%.1f–%.1f)", m, lo, hi);
    }

    /** {@code a}'s throughput over {@code b}'s (same bytes, so b's time over a's), marked against a target. */
    private static String ratio(Replay a, Replay b, double target) {
        if (a == null || b == null) {
            return "–";
        }
        double r = (double) b.nanos() / a.nanos();
        String text = String.format(Locale.ROOT, "%.2f", r);
        if (target <= 0) {
            return text;
        }
        return text + (r >= target ? " (met)" : " (not met)");
    }
}
