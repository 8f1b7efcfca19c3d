package io.tierlog.bench.compare;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.TreeSet;

/**
 * Renders {@link Results} as the markdown section of docs/BENCHMARKS.md and as a JSON document with every raw
 * sample. Ratios are Tierlog/Kafka of the medians; for latency a ratio below 1 means Tierlog is faster.
 */
public final class Report {
    static final String KAFKA = "Kafka";
    static final String TIERLOG = "Tierlog";

    private final Results results;
    private final Map<String, String> machine;
    private final Map<String, Object> settings;
    private final String timestamp;

    public Report(Results results, Map<String, String> machine, Map<String, Object> settings, String timestamp) {
        this.results = results;
        this.machine = machine;
        this.settings = settings;
        this.timestamp = timestamp;
    }

    public String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("Run ").append(timestamp).append(", mode `").append(settings.get("mode")).append("`: ")
                .append(settings.get("records")).append(" records of ").append(settings.get("valueBytes"))
                .append(" B values, ").append(settings.get("partitions")).append(" partitions, median of ")
                .append(settings.get("runs")).append(" runs. Ratio = Tierlog / Kafka of the medians; (lowest–highest run) after a median.\n\n");
        if (settings.containsKey("git")) {
            md.append("Code: `").append(settings.get("git")).append("`");
            Object build = settings.get("index-service build (quarkus-run.jar mtime)");
            if (build != null) {
                md.append("; index-service built ").append(build);
            }
            md.append("; run took ").append(settings.get("wallClockSeconds")).append(" s.\n\n");
        }
        if (settings.get("warmUp") instanceof List<?> warmups && !warmups.isEmpty()) {
            md.append("Warm-up before the first measured run, unmeasured, in rounds until the server JVM spent under ")
                    .append(Math.round(JitWarmup.QUIET_FRACTION * 100))
                    .append("% of a round compiling (a production server runs warm): ");
            md.append(String.join("; ", warmups.stream().map(String::valueOf).toList())).append(".\n\n");
        }
        md.append("Machine: ");
        List<String> parts = new ArrayList<>();
        machine.forEach((k, v) -> parts.add(k + ": `" + v + "`"));
        md.append(String.join("; ", parts)).append(".\n\n");
        double load = Math.max(firstNumber(machine.get("loadavg at start")), firstNumber(machine.get("loadavg at end")));
        double cores = firstNumber(machine.get("nproc"));
        if (cores > 0 && load > cores) {
            md.append(String.format(Locale.ROOT, "**Caution:** the 1-minute load average reached %.1f on %.0f cores during "
                    + "this run (sampled at its start and end; the benchmark's own broker, services, S3 server and clients "
                    + "count too): the CPUs were oversubscribed, so runs vary widely (see the ranges) and the ratios are "
                    + "rough.%n%n", load, cores));
        }

        md.append("#### Produce (acks after durability as stated; MB/s of value bytes)\n\n");
        md.append("Tierlog is measured twice per cell, each against the same Kafka runs: JSON request bodies (built "
                + "before the clock starts) and Kafka record-batch bodies (`Content-Type: "
                + "application/vnd.tierlog.record-batches`, one batch per request built by kafka-clients inside the "
                + "timed region).\n\n");
        md.append("| durability | producers | Tierlog body | metric | Kafka | Tierlog | Tierlog/Kafka |\n"
                + "|---|---|---|---|---|---|---|\n");
        for (Durability d : Durability.values()) {
            for (int p : producerCounts()) {
                for (ProduceBody body : ProduceBody.values()) {
                    produceRow(md, d, p, body, "MB/s", "mbps", false);
                    produceRow(md, d, p, body, "records/s", "rps", false);
                    produceRow(md, d, p, body, "p50 latency ms", "p50ms", true);
                    produceRow(md, d, p, body, "p99 latency ms", "p99ms", true);
                }
            }
        }

        md.append("\nLatency in this table is measured at full throttle, so it is mostly client-side queueing: Kafka's "
                + "producer buffers up to 32 MiB per client, Tierlog's client has up to " + TierlogSystem.MAX_IN_FLIGHT
                + " requests of " + settings.get("tierlogBatchRecords") + " records in flight. Compare latency in "
                + "the paced table below.\n");
        md.append("\n#### Produce latency at half of peak throughput (fsync before ack)\n\n");
        md.append("Each side is paced at half of its own full-throttle peak: Kafka with the producer count of its peak; "
                + "Tierlog's two bodies both with the producer count of the JSON peak, JSON at half of the JSON rate "
                + "and record batches at half of the record-batch rate with that count.\n\n");
        md.append("| system | producers | paced at records/s (half of peak) | achieved records/s | p50 ms | p99 ms "
                        + "| in the service: p50 / p99 ms | of which waiting for fsync: p50 / p99 ms |\n")
                .append("|---|---|---|---|---|---|---|---|\n");
        for (Results.Key k : halfPeakKeys()) {
            md.append("| ").append(halfPeakLabel(k)).append(" | ").append(k.producers()).append(" | ")
                    .append(fmt(results.median(k, "targetRps"))).append(" | ")
                    .append(fmt(results.median(k, "rps"))).append(" | ")
                    .append(withRange(k, "p50ms")).append(" | ")
                    .append(withRange(k, "p99ms")).append(" | ")
                    .append(pair(k, "serviceP50ms", "serviceP99ms")).append(" | ")
                    .append(pair(k, "fsyncWaitP50ms", "fsyncWaitP99ms")).append(" |\n");
        }
        md.append("\nThe client's latency of a paced record runs from its arrival to its request's answer, so it includes "
                + "the wait for the request in flight ahead of it; the service's runs from a request's arrival to its "
                + "durable append, and the fsync wait is the part of that after the write (Tierlog's "
                + "`tierlog_produce_latency_seconds` and `tierlog_produce_durable_wait_seconds`, bucket upper bounds, "
                + "medians over the runs). Kafka's side has no such split here.\n");

        md.append("\n#### Reads from offset 0 (one reader per partition)\n\n");
        md.append("Tierlog is read twice per run: JSON fetches, and fetches of the stored record batches "
                + "(`Accept: application/vnd.tierlog.record-batches`, CRC-checked and decoded with kafka-clients). "
                + "Both Tierlog rows are against the same Kafka consumer run.\n\n");
        md.append("| read | Kafka MB/s | Tierlog MB/s | Tierlog/Kafka |\n|---|---|---|---|\n");
        Results.Key kHot = new Results.Key(CompareCommand.HOT_CONSUME, KAFKA, Durability.NEVER, 0);
        Results.Key tHot = new Results.Key(CompareCommand.HOT_CONSUME, TIERLOG, Durability.NEVER, 0);
        Results.Key tHotBatches = new Results.Key(CompareCommand.HOT_CONSUME_BATCHES, TIERLOG, Durability.NEVER, 0);
        md.append("| hot consume, JSON | ").append(withRange(kHot, "mbps")).append(" | ")
                .append(withRange(tHot, "mbps")).append(" | ")
                .append(ratio(results.median(tHot, "mbps"), results.median(kHot, "mbps"))).append(" |\n");
        md.append("| hot consume, record batches | ").append(withRange(kHot, "mbps")).append(" | ")
                .append(withRange(tHotBatches, "mbps")).append(" | ")
                .append(ratio(results.median(tHotBatches, "mbps"), results.median(kHot, "mbps"))).append(" |\n");
        Results.Key cold = new Results.Key(CompareCommand.COLD_REPLAY, TIERLOG, Durability.NEVER, 0);
        Results.Key coldBatches = new Results.Key(CompareCommand.COLD_REPLAY_BATCHES, TIERLOG, Durability.NEVER, 0);
        Results.Key s3 = new Results.Key("s3-get", "S3Proxy", Durability.NEVER, 0);
        md.append("| cold replay from S3 after hot eviction, JSON | n/a (no tiered storage plugin in this setup) | ")
                .append(withRange(cold, "mbps")).append(" | n/a |\n");
        md.append("| cold replay from S3 after hot eviction, record batches | n/a (no tiered storage plugin in this setup) | ")
                .append(withRange(coldBatches, "mbps")).append(" | n/a |\n\n");
        md.append("Cold replay against Tierlog's own hot read in the same format: JSON ")
                .append(ratio(results.median(cold, "mbps"), results.median(tHot, "mbps")))
                .append(", record batches ")
                .append(ratio(results.median(coldBatches, "mbps"), results.median(tHotBatches, "mbps")))
                .append(" (cold/hot); against the raw S3 GET rate of the same objects (")
                .append(fmt(results.median(s3, "mbps"))).append(" MB/s, ")
                .append(fmt(results.median(s3, "getsPerSecond"))).append(" GET/s with ")
                .append(settings.get("partitions")).append(" threads): JSON ")
                .append(ratio(results.median(cold, "mbps"), results.median(s3, "mbps")))
                .append(", record batches ")
                .append(ratio(results.median(coldBatches, "mbps"), results.median(s3, "mbps"))).append(" (cold/raw).\n\n");

        Results.Key keys = new Results.Key("key-partitioning", "both", Durability.NEVER, 0);
        if (results.count(keys) > 0) {
            md.append("Key partitioning: ").append(fmt(results.median(keys, "keys"))).append(" keys over ")
                    .append(settings.get("partitions")).append(" partitions; partitions that differ between Kafka and Tierlog: ")
                    .append(fmt(results.median(keys, "mismatches"))).append(" (must be 0).\n\n");
        }

        md.append("#### Targets\n\n| target | measured | met? |\n|---|---|---|\n");
        for (ProduceBody body : ProduceBody.values()) {
            for (int p : producerCounts()) {
                OptionalDouble r = ratioValue(body, Durability.ALWAYS, p, "mbps");
                md.append("| produce MB/s at equal durability (fsync before ack, ").append(p)
                        .append(" producers, Tierlog ").append(body.label()).append(") >= 1.0x Kafka | ")
                        .append(fmtRatio(r)).append(" | ").append(verdict(r, 1.0, true)).append(" |\n");
                OptionalDouble rn = ratioValue(body, Durability.NEVER, p, "mbps");
                md.append("| produce MB/s at equal durability (page cache, ").append(p)
                        .append(" producers, Tierlog ").append(body.label()).append(") >= 1.0x Kafka | ")
                        .append(fmtRatio(rn)).append(" | ").append(verdict(rn, 1.0, true)).append(" |\n");
            }
        }
        OptionalDouble hot = ratioOf(results.median(tHot, "mbps"), results.median(kHot, "mbps"));
        md.append("| hot consume (JSON) >= 1.0x Kafka | ").append(fmtRatio(hot)).append(" | ").append(verdict(hot, 1.0, true)).append(" |\n");
        OptionalDouble hotBatches = ratioOf(results.median(tHotBatches, "mbps"), results.median(kHot, "mbps"));
        md.append("| hot consume (record batches) >= 1.0x Kafka | ").append(fmtRatio(hotBatches)).append(" | ")
                .append(verdict(hotBatches, 1.0, true)).append(" |\n");
        for (Results.Key k : halfPeakKeys()) {
            if (k.system().equals(TIERLOG)) {
                OptionalDouble p99 = results.median(k, "p99ms");
                md.append("| ").append(halfPeakLabel(k)).append(" p99 produce latency, fsync always, at half of its peak "
                        + "<= 10 ms | ").append(fmt(p99)).append(" ms | ").append(verdict(p99, 10.0, false)).append(" |\n");
            }
        }

        if (!results.notes().isEmpty()) {
            md.append("\n#### Notes from this run\n\n");
            results.notes().forEach(n -> md.append("- ").append(n).append('\n'));
        }
        return md.toString();
    }

    /** Producer counts measured at full throttle by either side, with either Tierlog body. */
    private Set<Integer> producerCounts() {
        Set<Integer> counts = new TreeSet<>(results.producerCounts("produce"));
        counts.addAll(results.producerCounts(ProduceBody.RECORD_BATCHES.producePhase()));
        return counts;
    }

    /** The half-peak samples present: Kafka's, then Tierlog JSON's, then Tierlog record batches', by producers. */
    private List<Results.Key> halfPeakKeys() {
        List<Results.Key> keys = new ArrayList<>();
        List<Results.Key> sides = List.of(new Results.Key("half-peak", KAFKA, Durability.ALWAYS, 0),
                new Results.Key(ProduceBody.JSON.halfPeakPhase(), TIERLOG, Durability.ALWAYS, 0),
                new Results.Key(ProduceBody.RECORD_BATCHES.halfPeakPhase(), TIERLOG, Durability.ALWAYS, 0));
        for (Results.Key side : sides) {
            for (int p : results.producerCounts(side.phase())) {
                Results.Key k = new Results.Key(side.phase(), side.system(), Durability.ALWAYS, p);
                if (results.count(k) > 0) {
                    keys.add(k);
                }
            }
        }
        return keys;
    }

    private static String halfPeakLabel(Results.Key k) {
        if (!k.system().equals(TIERLOG)) {
            return k.system();
        }
        ProduceBody body = k.phase().equals(ProduceBody.RECORD_BATCHES.halfPeakPhase())
                ? ProduceBody.RECORD_BATCHES : ProduceBody.JSON;
        return TIERLOG + ", " + body.label();
    }

    private void produceRow(StringBuilder md, Durability d, int p, ProduceBody body, String label, String metric,
                            boolean latency) {
        Results.Key k = new Results.Key("produce", KAFKA, d, p);
        Results.Key t = new Results.Key(body.producePhase(), TIERLOG, d, p);
        if (results.count(k) == 0 && results.count(t) == 0) {
            return;
        }
        md.append("| ").append(d.label()).append(" | ").append(p).append(" | ").append(body.label()).append(" | ")
                .append(label).append(" | ")
                .append(withRange(k, metric)).append(" | ").append(withRange(t, metric)).append(" | ")
                .append(ratio(results.median(t, metric), results.median(k, metric)))
                .append(latency ? " (lower is better)" : "").append(" |\n");
    }

    /** The median, with the lowest and highest run in parentheses so that noise is visible. */
    /** "p50 / p99" medians of two of a key's metrics, or "–" where the system does not report them. */
    private String pair(Results.Key key, String p50, String p99) {
        OptionalDouble a = results.median(key, p50);
        OptionalDouble b = results.median(key, p99);
        return a.isPresent() && b.isPresent() ? fmt(a) + " / " + fmt(b) : "–";
    }

    private String withRange(Results.Key key, String metric) {
        OptionalDouble median = results.median(key, metric);
        double[] all = results.samples().getOrDefault(key, List.of()).stream()
                .filter(m -> m.containsKey(metric)).mapToDouble(m -> m.get(metric)).sorted().toArray();
        if (all.length < 2) {
            return fmt(median);
        }
        return fmt(median) + " (" + fmt(OptionalDouble.of(all[0])) + "–" + fmt(OptionalDouble.of(all[all.length - 1])) + ")";
    }

    private OptionalDouble ratioValue(ProduceBody body, Durability d, int p, String metric) {
        return ratioOf(results.median(new Results.Key(body.producePhase(), TIERLOG, d, p), metric),
                results.median(new Results.Key("produce", KAFKA, d, p), metric));
    }

    private static double firstNumber(String s) {
        if (s == null || s.isBlank()) {
            return -1;
        }
        try {
            return Double.parseDouble(s.trim().split("\\s+")[0]);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static OptionalDouble ratioOf(OptionalDouble a, OptionalDouble b) {
        if (a.isEmpty() || b.isEmpty() || b.getAsDouble() == 0) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(a.getAsDouble() / b.getAsDouble());
    }

    static String ratio(OptionalDouble a, OptionalDouble b) {
        return fmtRatio(ratioOf(a, b));
    }

    static String fmtRatio(OptionalDouble r) {
        return r.isPresent() ? String.format(Locale.ROOT, "%.2fx", r.getAsDouble()) : "not measured";
    }

    static String verdict(OptionalDouble value, double bound, boolean atLeast) {
        if (value.isEmpty()) {
            return "not measured";
        }
        boolean met = atLeast ? value.getAsDouble() >= bound : value.getAsDouble() <= bound;
        return met ? "yes" : "**no**";
    }

    static String fmt(OptionalDouble v) {
        if (v.isEmpty()) {
            return "not measured";
        }
        double d = v.getAsDouble();
        if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            return String.format(Locale.ROOT, "%,d", (long) d);
        }
        if (Math.abs(d) >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", d);
        }
        if (Math.abs(d) >= 100) {
            return String.format(Locale.ROOT, "%.0f", d);
        }
        return String.format(Locale.ROOT, "%.2f", d);
    }

    public String json() throws Exception {
        ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = mapper.createObjectNode();
        root.put("timestamp", timestamp);
        root.set("settings", mapper.valueToTree(settings));
        root.set("machine", mapper.valueToTree(machine));
        ArrayNode samples = root.putArray("samples");
        results.samples().forEach((key, runs) -> {
            ObjectNode s = samples.addObject();
            s.put("phase", key.phase()).put("system", key.system()).put("durability", key.durability().name())
                    .put("producers", key.producers());
            s.set("runs", mapper.valueToTree(runs));
        });
        root.set("notes", mapper.valueToTree(results.notes()));
        root.put("markdown", markdown());
        return mapper.writeValueAsString(root);
    }
}
