package io.tierlog.bench.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.HdrHistogram.Histogram;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * HTTP load generator for the index-service (docs/BENCHMARKS.md, "index-service HTTP produce and fetch"), run as
 * its own process against a running service:
 *
 * <pre>
 * java -cp bench/target/tierlog-bench.jar io.tierlog.bench.http.HttpBench [url] [secondsPerCell] [fetchMiB]
 * </pre>
 *
 * Produce: for each batch size (1, 100, 1000 records of 1 KiB values) and each client count (1, 8, 32), a fresh
 * 8-partition topic; every client loops POST /records (synchronous, one request in flight per client) for a
 * warm-up second and then {@code secondsPerCell}; records/s and MB/s count value bytes of 200 answers, latency is
 * per request (HdrHistogram). Fetch: fills one partition with {@code fetchMiB} MiB of 1 KiB values in batches of
 * 1000, then reads it from offset 0 to the end with one client (maxRecords 10000, maxBytes 8 MiB) and reports
 * value MB/s and response MB/s. Prints Markdown rows.
 */
public final class HttpBench {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int VALUE_BYTES = 1024;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).executor(Executors.newFixedThreadPool(4)).build();
    private final String url;

    private HttpBench(String url) {
        this.url = url;
    }

    public static void main(String[] args) throws Exception {
        String url = args.length > 0 ? args[0] : "http://127.0.0.1:8080";
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        long fetchMiB = args.length > 2 ? Long.parseLong(args[2]) : 1024;
        HttpBench bench = new HttpBench(url);
        System.out.println("| batch (records) | clients | records/s | MB/s | p50 ms | p99 ms | requests |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (int batch : new int[]{1, 100, 1000}) {
            for (int clients : new int[]{1, 8, 32}) {
                bench.produceCell(batch, clients, seconds);
            }
        }
        if (fetchMiB > 0) {
            bench.fetch(fetchMiB);
        }
        System.exit(0);
    }

    private static String body(int records, int partitionOrMinus1) {
        String value = "\"" + "v".repeat(VALUE_BYTES - 2) + "\"";
        StringBuilder b = new StringBuilder(records * (VALUE_BYTES + 32)).append("{\"records\":[");
        for (int i = 0; i < records; i++) {
            b.append(i == 0 ? "" : ",").append("{");
            if (partitionOrMinus1 >= 0) {
                b.append("\"partition\":").append(partitionOrMinus1).append(",");
            }
            b.append("\"value\":").append(value).append("}");
        }
        return b.append("]}").toString();
    }

    private String createTopic(int partitions) throws Exception {
        String name = "bench-" + UUID.randomUUID().toString().substring(0, 8);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/topics"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"" + name + "\",\"partitions\":" + partitions
                        + "}")).header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 201) {
            throw new IllegalStateException("create topic: " + r.statusCode() + " " + r.body());
        }
        return name;
    }

    private void produceCell(int batch, int clients, int seconds) throws Exception {
        String topic = createTopic(8);
        byte[] body = body(batch, -1).getBytes(StandardCharsets.UTF_8);
        URI uri = URI.create(url + "/v1/topics/" + topic + "/records");
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        long warmupEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        long end = warmupEnd + TimeUnit.SECONDS.toNanos(seconds);
        AtomicLong requests = new AtomicLong();
        List<Future<Histogram>> futures = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            futures.add(pool.submit(() -> {
                Histogram h = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
                HttpRequest req = HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
                while (true) {
                    long start = System.nanoTime();
                    if (start >= end) {
                        return h;
                    }
                    HttpResponse<byte[]> r = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
                    long micros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start);
                    if (r.statusCode() != 200) {
                        throw new IllegalStateException("produce: " + r.statusCode() + " " + new String(r.body(),
                                StandardCharsets.UTF_8));
                    }
                    if (start >= warmupEnd) {
                        h.recordValue(Math.max(1, micros));
                        requests.incrementAndGet();
                    }
                }
            }));
        }
        Histogram all = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
        for (Future<Histogram> f : futures) {
            all.add(f.get());
        }
        pool.shutdown();
        long records = requests.get() * batch;
        double recordsPerSec = records / (double) seconds;
        double mbPerSec = records * (double) VALUE_BYTES / seconds / 1e6;
        System.out.printf(Locale.ROOT, "| %d | %d | %,.0f | %.2f | %.2f | %.2f | %,d |%n", batch, clients, recordsPerSec,
                mbPerSec, all.getValueAtPercentile(50) / 1000.0, all.getValueAtPercentile(99) / 1000.0, requests.get());
    }

    private void fetch(long mib) throws Exception {
        String topic = createTopic(1);
        long records = mib * 1024 * 1024 / VALUE_BYTES;
        byte[] body = body(1000, 0).getBytes(StandardCharsets.UTF_8);
        URI produce = URI.create(url + "/v1/topics/" + topic + "/records");
        for (long n = 0; n < records; n += 1000) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(produce).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("fill: " + r.statusCode() + " " + r.body());
            }
        }
        long offset = 0;
        long valueBytes = 0;
        long responseBytes = 0;
        int requests = 0;
        long start = System.nanoTime();
        while (offset < records) {
            HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/topics/" + topic
                    + "/partitions/0/records?offset=" + offset + "&maxRecords=10000&maxBytes=8388608")).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("fetch: " + r.statusCode());
            }
            JsonNode root = JSON.readTree(r.body());
            long next = root.get("nextOffset").asLong();
            valueBytes += (next - offset) * VALUE_BYTES;
            responseBytes += r.body().length;
            offset = next;
            requests++;
        }
        double secs = (System.nanoTime() - start) / 1e9;
        System.out.println();
        System.out.println("| fetch | records | value MB/s | response MB/s | records/s | requests | seconds |");
        System.out.println("|---|---|---|---|---|---|---|");
        System.out.printf(Locale.ROOT, "| sequential, 1 client, offset 0 to end | %,d | %.1f | %.1f | %,.0f | %,d | %.1f |%n",
                records, valueBytes / secs / 1e6, responseBytes / secs / 1e6, records / secs, requests, secs);
    }
}
