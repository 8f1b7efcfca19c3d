package io.tierlog.bench.kafkaperf;

import io.tierlog.bench.compare.ManagedProcess;
import io.tierlog.bench.kafka.KafkaBroker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kafka's own performance tools from kafka-tools 4.4.0 ({@code org.apache.kafka.tools.ProducerPerformance} and
 * {@code ConsumerPerformance}, what {@code kafka-producer-perf-test.sh} and {@code kafka-consumer-perf-test.sh} run),
 * each run as its own JVM from the broker's class path, and their final summary lines parsed. The tools are run
 * unchanged, so the two servers are measured by the same client code with the same settings.
 */
final class PerfTools {
    /** E.g. "500000 records sent, 41152.263374 records/sec (40.19 MB/sec), 611.82 ms avg latency, ...". */
    private static final Pattern PRODUCER_SUMMARY = Pattern.compile(
            "(\\d+) records sent, ([\\d.]+) records/sec \\(([\\d.]+) MB/sec\\), ([\\d.]+) ms avg latency, "
                    + "([\\d.]+) ms max latency, (\\d+) ms 50th, (\\d+) ms 95th, (\\d+) ms 99th, (\\d+) ms 99\\.9th");
    private static final Duration TIMEOUT = Duration.ofMinutes(20);

    private final Path libsDir;
    private final Path logDir;

    PerfTools(Path libsDir, Path logDir) {
        this.libsDir = libsDir;
        this.logDir = logDir;
    }

    /** One ProducerPerformance run's summary (the tool's MB/sec is 2^20 bytes per MB). */
    record ProducerResult(long records, double recordsPerSec, double mibPerSec, double avgMs, double maxMs,
                          int p50Ms, int p95Ms, int p99Ms, int p999Ms, String line) {
    }

    /**
     * One ConsumerPerformance run's summary (MB is 2^20 bytes, as the tool prints it), and its consumer's fetch
     * metrics from {@code --print-metrics} ({@link FetchMetrics#NONE} when the output has none).
     */
    record ConsumerResult(long records, double recordsPerSec, double mibPerSec, double fetchRecordsPerSec,
                          double fetchMibPerSec, long rebalanceMs, String line, FetchMetrics fetch) {
    }

    /**
     * The consumer's fetch figures over the whole run, as its client metrics give them (group
     * {@code consumer-fetch-manager-metrics}, the client-wide ones, not those per topic): fetch requests answered,
     * their mean size in bytes and mean latency in ms (request sent to response received), and records per request.
     */
    record FetchMetrics(double fetchTotal, double fetchSizeAvg, double fetchLatencyAvgMs, double recordsPerRequestAvg) {
        static final FetchMetrics NONE = new FetchMetrics(Double.NaN, Double.NaN, Double.NaN, Double.NaN);

        String line() {
            return String.format(java.util.Locale.ROOT, "fetch-total %.0f, fetch-size-avg %.0f B, "
                    + "fetch-latency-avg %.1f ms, records-per-request-avg %.0f", fetchTotal, fetchSizeAvg,
                    fetchLatencyAvgMs, recordsPerRequestAvg);
        }
    }

    /**
     * A line of {@code --print-metrics}: "group:name:{tags} : value", padded. Only the client-wide fetch metrics
     * (tags of the client id alone) are taken.
     */
    private static final Pattern FETCH_METRIC = Pattern.compile(
            "(?m)^consumer-fetch-manager-metrics:([a-z-]+):\\{client-id=[^,}]*}\\s*:\\s*([-+0-9.,Ee]+|NaN)\\s*$");

    /**
     * Runs ProducerPerformance: {@code records} values of {@code recordSize} random bytes, at {@code throughput}
     * records/s (-1: as fast as it goes), with {@code props} for the producer.
     */
    ProducerResult produce(String name, String bootstrap, String topic, long records, int recordSize,
                           long throughput, Map<String, String> props) {
        return produce(name, bootstrap, topic, records, recordSize, throughput, props, List.of());
    }

    /**
     * As {@link #produce(String, String, String, long, int, long, Map)} with more of the tool's own options, such as
     * {@code --transactional-id} and {@code --transaction-duration-ms}.
     */
    ProducerResult produce(String name, String bootstrap, String topic, long records, int recordSize,
                           long throughput, Map<String, String> props, List<String> options) {
        List<String> args = new ArrayList<>(List.of("--bootstrap-server", bootstrap, "--topic", topic,
                "--num-records", Long.toString(records), "--record-size", Integer.toString(recordSize),
                "--throughput", Long.toString(throughput)));
        args.addAll(options);
        args.add("--command-property");
        props.forEach((k, v) -> args.add(k + "=" + v));
        String out = run(name, "org.apache.kafka.tools.ProducerPerformance", args);
        return parseProducer(out);
    }

    /** Runs ConsumerPerformance: reads {@code records} records of {@code topic} in a fresh group. */
    ConsumerResult consume(String name, String bootstrap, String topic, long records, String group) {
        String out = run(name, "org.apache.kafka.tools.ConsumerPerformance", List.of("--bootstrap-server", bootstrap,
                "--topic", topic, "--num-records", Long.toString(records), "--group", group, "--timeout", "60000",
                "--print-metrics"));
        return parseConsumer(out);
    }

    private String run(String name, String mainClass, List<String> args) {
        Path log = logDir.resolve(name + ".log");
        // The JVM kafka-producer-perf-test.sh and kafka-consumer-perf-test.sh start: a 512 MiB heap and
        // kafka-run-class.sh's performance options.
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m"));
        cmd.addAll(KafkaBroker.KAFKA_JVM_PERFORMANCE_OPTS);
        cmd.addAll(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", libsDir.toAbsolutePath() + "/*",
                mainClass));
        cmd.addAll(args);
        ManagedProcess.run(name, cmd, logDir, log, TIMEOUT);
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The last summary line of ProducerPerformance's output (the periodic progress lines lack the percentiles). */
    static ProducerResult parseProducer(String output) {
        Matcher m = PRODUCER_SUMMARY.matcher(output);
        ProducerResult last = null;
        while (m.find()) {
            last = new ProducerResult(Long.parseLong(m.group(1)), Double.parseDouble(m.group(2)),
                    Double.parseDouble(m.group(3)), Double.parseDouble(m.group(4)), Double.parseDouble(m.group(5)),
                    Integer.parseInt(m.group(6)), Integer.parseInt(m.group(7)), Integer.parseInt(m.group(8)),
                    Integer.parseInt(m.group(9)), m.group(0));
        }
        if (last == null) {
            throw new IllegalStateException("no ProducerPerformance summary in its output:\n" + tail(output));
        }
        return last;
    }

    /**
     * ConsumerPerformance's header ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg,
     * nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec") and the value line after it.
     */
    static ConsumerResult parseConsumer(String output) {
        String[] lines = output.split("\\R");
        for (int i = 0; i < lines.length - 1; i++) {
            if (lines[i].startsWith("start.time")) {
                List<String> names = Arrays.stream(lines[i].split(",")).map(String::trim).toList();
                String[] values = lines[i + 1].split(",");
                if (values.length != names.size()) {
                    break;
                }
                java.util.function.Function<String, String> v = n -> values[names.indexOf(n)].trim();
                return new ConsumerResult(Long.parseLong(v.apply("data.consumed.in.nMsg")),
                        Double.parseDouble(v.apply("nMsg.sec")), Double.parseDouble(v.apply("MB.sec")),
                        Double.parseDouble(v.apply("fetch.nMsg.sec")), Double.parseDouble(v.apply("fetch.MB.sec")),
                        Long.parseLong(v.apply("rebalance.time.ms")), lines[i] + "\n" + lines[i + 1],
                        parseFetchMetrics(output));
            }
        }
        throw new IllegalStateException("no ConsumerPerformance summary in its output:\n" + tail(output));
    }

    /** The client-wide fetch metrics of {@code --print-metrics} output; NaN for any not printed. */
    static FetchMetrics parseFetchMetrics(String output) {
        java.util.Map<String, Double> found = new java.util.HashMap<>();
        Matcher m = FETCH_METRIC.matcher(output);
        while (m.find()) {
            String value = m.group(2).replace(',', '.'); // a decimal comma in some locales
            found.put(m.group(1), value.equals("NaN") ? Double.NaN : Double.parseDouble(value));
        }
        if (found.isEmpty()) {
            return FetchMetrics.NONE;
        }
        return new FetchMetrics(found.getOrDefault("fetch-total", Double.NaN),
                found.getOrDefault("fetch-size-avg", Double.NaN), found.getOrDefault("fetch-latency-avg", Double.NaN),
                found.getOrDefault("records-per-request-avg", Double.NaN));
    }

    private static String tail(String s) {
        return s.length() <= 4000 ? s : s.substring(s.length() - 4000);
    }
}
