package io.tierlog.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.tierlog.client.Compression;
import io.tierlog.client.Producer;
import io.tierlog.client.ProducerConfig;
import io.tierlog.client.ProducerRecord;
import io.tierlog.client.RecordMetadata;
import io.tierlog.client.TierlogException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code tierlog produce TOPIC [FILE...]}: one record per input line (stdin without files), through the client's
 * idempotent, batching producer. Exits once every record is acknowledged; a record that failed makes it exit
 * with that failure's code.
 */
@Command(name = "produce", description = "Produce one record per line of stdin or of the files given.")
final class ProduceCommand extends Leaf {
    enum Format { raw, json }

    @Parameters(index = "0", paramLabel = "TOPIC")
    String topic;
    @Parameters(index = "1..*", paramLabel = "FILE", description = "Files to read (default: stdin).")
    List<Path> files = new ArrayList<>();
    @Option(names = {"-k", "--key-separator"}, paramLabel = "SEP",
            description = "Raw lines are KEY SEP VALUE (the first SEP splits); lines without it have no key.")
    String keySeparator;
    @Option(names = {"-f", "--format"}, paramLabel = "raw|json", description = "raw (default): the line is the "
            + "value; json: each line is {\"key\", \"value\" (any JSON, stored as its text), \"headers\", "
            + "\"partition\", \"timestamp\"}.")
    Format format = Format.raw;
    @Option(names = {"-p", "--partition"}, description = "Send every record to this partition.")
    Integer partition;
    @Option(names = {"-H", "--header"}, paramLabel = "NAME=VALUE", description = "A header on every record (repeatable).")
    Map<String, String> headers = new LinkedHashMap<>();
    @Option(names = "--compression", paramLabel = "none|gzip|snappy|lz4|zstd")
    String compression = "none";
    @Option(names = "--linger-ms", description = "Batching delay (default 5).")
    long lingerMs = 5;

    @Override
    int run() throws Exception {
        Compression codec = switch (compression) {
            case "none" -> Compression.NONE;
            case "gzip" -> Compression.GZIP;
            case "snappy" -> Compression.SNAPPY;
            case "lz4" -> Compression.LZ4;
            case "zstd" -> Compression.ZSTD;
            default -> throw new TierlogCli.UsageException("--compression must be none, gzip, snappy, lz4 or zstd: "
                    + compression);
        };
        Map<String, byte[]> common = new LinkedHashMap<>();
        headers.forEach((k, v) -> common.put(k, v.getBytes(StandardCharsets.UTF_8)));
        Map<Integer, long[]> ranges = new TreeMap<>();
        AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        long count = 0;
        try (Producer producer = client().producer(ProducerConfig.defaults().withCompression(codec)
                .withLinger(java.time.Duration.ofMillis(lingerMs)))) {
            for (Iterator<String> lines = lines(); lines.hasNext(); ) {
                String line = lines.next();
                if (line.isEmpty() && format == Format.json) {
                    continue;
                }
                count++;
                CompletableFuture<RecordMetadata> f = producer.send(record(line, count, common));
                f.whenComplete((m, e) -> {
                    if (e != null) {
                        firstFailure.compareAndSet(null, e instanceof java.util.concurrent.CompletionException
                                && e.getCause() != null ? e.getCause() : e);
                    } else {
                        synchronized (ranges) {
                            long[] r = ranges.computeIfAbsent(m.partition(), p -> new long[]{Long.MAX_VALUE, -1});
                            r[0] = Math.min(r[0], m.offset());
                            r[1] = Math.max(r[1], m.offset());
                        }
                    }
                });
                if (firstFailure.get() != null) {
                    break; // stop reading: the rest would fail alike (unknown topic, no permission, ...)
                }
            }
            producer.flush();
        }
        Throwable failure = firstFailure.get();
        if (failure instanceof Exception e) {
            return root().fail(err(), e);
        }
        if (json()) {
            Map<String, Object> parts = new TreeMap<>();
            ranges.forEach((p, r) -> parts.put(Integer.toString(p), Map.of("firstOffset", r[0], "lastOffset", r[1])));
            out().println(Json.write(Map.of("topic", topic, "records", count, "partitions", parts)));
        } else {
            out().println("produced " + count + " records to " + topic);
        }
        return TierlogCli.OK;
    }

    private ProducerRecord record(String line, long lineNumber, Map<String, byte[]> common) {
        if (format == Format.raw) {
            String key = null;
            String value = line;
            if (keySeparator != null) {
                int at = line.indexOf(keySeparator);
                if (at >= 0) {
                    key = line.substring(0, at);
                    value = line.substring(at + keySeparator.length());
                }
            }
            return new ProducerRecord(topic, partition, key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                    value.getBytes(StandardCharsets.UTF_8), common, null);
        }
        JsonNode r;
        try {
            r = Json.MAPPER.readTree(line);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new TierlogCli.UsageException("line " + lineNumber + " is not JSON: " + e.getOriginalMessage());
        }
        if (!r.isObject() || !r.has("value")) {
            throw new TierlogCli.UsageException("line " + lineNumber + " must be a JSON object with a \"value\"");
        }
        Map<String, byte[]> h = new LinkedHashMap<>(common);
        r.path("headers").fields().forEachRemaining(e -> h.put(e.getKey(),
                e.getValue().isNull() ? null : e.getValue().asText().getBytes(StandardCharsets.UTF_8)));
        JsonNode v = r.get("value");
        JsonNode k = r.path("key");
        Integer p = r.hasNonNull("partition") ? Integer.valueOf(r.get("partition").asInt()) : partition;
        Long ts = r.hasNonNull("timestamp") ? Long.valueOf(r.get("timestamp").asLong()) : null;
        return new ProducerRecord(topic, p, k.isMissingNode() || k.isNull() ? null
                : k.asText().getBytes(StandardCharsets.UTF_8),
                v.isNull() ? null : v.toString().getBytes(StandardCharsets.UTF_8), h, ts);
    }

    private Iterator<String> lines() throws IOException {
        List<BufferedReader> readers = new ArrayList<>();
        if (files.isEmpty()) {
            readers.add(new BufferedReader(new InputStreamReader(root().stdin, StandardCharsets.UTF_8)));
        } else {
            for (Path f : files) {
                if (!Files.isReadable(f)) {
                    throw new TierlogCli.UsageException("cannot read " + f);
                }
                readers.add(Files.newBufferedReader(f, StandardCharsets.UTF_8));
            }
        }
        return new Iterator<>() {
            int at;
            String next = advance();

            private String advance() {
                try {
                    while (at < readers.size()) {
                        String l = readers.get(at).readLine();
                        if (l != null) {
                            return l;
                        }
                        readers.get(at++).close();
                    }
                    return null;
                } catch (IOException e) {
                    throw new TierlogException("reading input: " + e.getMessage(), e);
                }
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public String next() {
                String l = next;
                next = advance();
                return l;
            }
        };
    }
}
