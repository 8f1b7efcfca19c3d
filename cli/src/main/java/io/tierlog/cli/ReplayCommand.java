package io.tierlog.cli;

import io.tierlog.client.Admin;
import io.tierlog.client.Consumer;
import io.tierlog.client.ConsumerConfig;
import io.tierlog.client.ConsumerRecord;
import io.tierlog.client.TierlogClient;
import io.tierlog.client.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code tierlog replay TOPIC --out FILE}: copies a range of a topic (by offsets or times, from either tier) to a
 * file, one record per line, showing records done, MB/s and the time left on stderr while it runs.
 */
@Command(name = "replay", description = "Copy a range of records (hot or cold) to a file, with progress.")
final class ReplayCommand extends Leaf {
    @Parameters(index = "0", paramLabel = "TOPIC")
    String topic;
    @Option(names = "--out", required = true, paramLabel = "FILE")
    Path file;
    @Option(names = {"-p", "--partition"}, description = "A partition (repeatable; default: all).")
    List<Integer> partitions = new ArrayList<>();
    @Option(names = "--from", paramLabel = "OFFSET", description = "First offset of each partition (default: its start).")
    Long fromOffset;
    @Option(names = "--from-timestamp", paramLabel = "MS|ISO-8601")
    String fromTimestamp;
    @Option(names = "--to", paramLabel = "OFFSET", description = "Stop before this offset (default: the end as of now).")
    Long toOffset;
    @Option(names = "--to-timestamp", paramLabel = "MS|ISO-8601", description = "Stop before the first record at or after this time.")
    String toTimestamp;
    @Option(names = "--format", paramLabel = "value|kv|json", description = "Line format (default json).")
    RecordPrinter.Format format = RecordPrinter.Format.json;
    @Option(names = "--separator", description = "Between key and value in kv format (default: a tab).")
    String separator = "\t";

    @Override
    int run() throws IOException {
        if (fromOffset != null && fromTimestamp != null || toOffset != null && toTimestamp != null) {
            throw new TierlogCli.UsageException("give one start (--from or --from-timestamp) and one end at most");
        }
        TierlogClient client = client();
        Admin admin = client.admin();
        int count = admin.describeTopic(topic).partitions();
        Map<TopicPartition, long[]> ranges = new TreeMap<>();
        long total = 0;
        for (int p : partitions.isEmpty() ? ConsumeCommand.range(count) : partitions) {
            long start = Math.max(admin.earliestOffset(topic, p), fromOffset != null ? fromOffset
                    : fromTimestamp != null ? admin.offsetForTimestamp(topic, p, ConsumeCommand.timestamp(fromTimestamp)) : 0);
            long end = toOffset != null ? Math.min(toOffset, admin.latestOffset(topic, p))
                    : toTimestamp != null ? admin.offsetForTimestamp(topic, p, ConsumeCommand.timestamp(toTimestamp))
                    : admin.latestOffset(topic, p);
            if (end > start) {
                ranges.put(new TopicPartition(topic, p), new long[]{start, end});
                total += end - start;
            }
        }
        RecordPrinter printer = new RecordPrinter(format, separator);
        Progress progress = new Progress(err(), total);
        long records = 0;
        try (Counting counting = new Counting(Files.newOutputStream(file));
             PrintWriter w = new PrintWriter(new BufferedWriter(new OutputStreamWriter(counting, StandardCharsets.UTF_8),
                     1 << 16));
             Consumer consumer = client.consumer(ConsumerConfig.defaults().withAutoCommit(false)
                     .withMaxPollRecords(5_000).withFetchMaxBytes(4 << 20))) {
            Set<TopicPartition> open = new HashSet<>(ranges.keySet());
            consumer.assign(open);
            ranges.forEach((tp, r) -> consumer.seek(tp, r[0]));
            while (!open.isEmpty()) {
                for (ConsumerRecord rec : consumer.poll(Duration.ofSeconds(1))) {
                    long[] r = ranges.get(rec.topicPartition());
                    if (rec.offset() < r[1]) {
                        printer.print(w, rec);
                        records++;
                    }
                }
                boolean done = open.removeIf(tp -> consumer.position(tp) != null
                        && consumer.position(tp) >= ranges.get(tp)[1]);
                if (done) {
                    consumer.assign(open);
                }
                w.flush();
                progress.update(records, counting.bytes);
            }
            w.flush();
            progress.finish(records, counting.bytes);
            if (json()) {
                out().println(Json.write(Map.of("file", file.toString(), "records", records, "bytes", counting.bytes)));
            } else {
                out().println("replayed " + records + " records (" + counting.bytes + " bytes) to " + file);
            }
        }
        return TierlogCli.OK;
    }

    /** The progress line: rewritten in place ({@code \r}) at most every 250 ms. */
    static final class Progress {
        private final PrintWriter err;
        private final long total;
        private final long startNanos = System.nanoTime();
        private long lastNanos;

        Progress(PrintWriter err, long total) {
            this.err = err;
            this.total = total;
        }

        void update(long records, long bytes) {
            long now = System.nanoTime();
            if (now - lastNanos < 250_000_000L) {
                return;
            }
            lastNanos = now;
            err.print("\r" + line(records, bytes, now));
            err.flush();
        }

        void finish(long records, long bytes) {
            err.println("\r" + line(records, bytes, System.nanoTime()));
            err.flush();
        }

        String line(long records, long bytes, long now) {
            double seconds = Math.max(1e-3, (now - startNanos) / 1e9);
            double rate = records / seconds;
            long left = rate <= 0 ? -1 : (long) ((total - records) / rate);
            return String.format("%,d / %,d records  %.1f MB/s  ETA %s", records, total, bytes / seconds / 1e6,
                    left < 0 ? "--:--" : String.format("%d:%02d", left / 60, left % 60));
        }
    }

    /** Counts the bytes written to the file. */
    static final class Counting extends java.io.FilterOutputStream {
        long bytes;

        Counting(java.io.OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            bytes++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            bytes += len;
        }
    }
}
