package io.tierlog.bench.soak;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.bench.http.BlockingHttp;
import io.tierlog.bench.compare.Workspace;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The soak's steady mixed load on one topic of the packaged service, each role a thread of its own:
 * <ul>
 *   <li>producers: paced JSON produce requests, each to the next partition in rotation, records acknowledged into
 *   the {@link Ledger};</li>
 *   <li>the tail reader: fetches every partition from offset 0 as it grows, checking offsets dense and adding
 *   every record to its own ledger (the read-back check);</li>
 *   <li>the replay reader: reads random windows of old offsets (by then in S3, the hot copies evicted) one after
 *   the other, checking offsets dense;</li>
 *   <li>long-pollers: {@code waitMs} fetches at the end of a partition, following it;</li>
 *   <li>stream readers: an SSE stream from the end of a partition, checking event ids dense.</li>
 * </ul>
 * Every 5xx, transport error and check failure is counted; the first few are logged.
 */
final class SoakLoad {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration CONNECT = Duration.ofSeconds(10);
    private static final Duration READ = Duration.ofSeconds(60);

    record Settings(int partitions, int producers, double requestsPerSecond, int recordsPerRequest, int valueBytes,
                    int longPollers, int streams, boolean replay) {
    }

    private final URI base;
    private final String topic;
    private final Settings settings;
    private final AtomicBoolean producing = new AtomicBoolean(true);
    private final AtomicBoolean reading = new AtomicBoolean(true);
    private final List<Thread> threads = new ArrayList<>();
    private final List<Thread> producerThreads = new ArrayList<>();
    private final List<AutoCloseable> streamsOpen = new ArrayList<>();

    final Ledger acked;
    final Ledger read;
    final Recorder produceLatency = new Recorder(3);
    final Recorder fetchLatency = new Recorder(3);
    final LongAdder producedRecords = new LongAdder();
    final LongAdder tailRecords = new LongAdder();
    final LongAdder replayRecords = new LongAdder();
    final LongAdder longPollAnswers = new LongAdder();
    final LongAdder longPollRecords = new LongAdder();
    final LongAdder streamRecords = new LongAdder();
    final LongAdder errors = new LongAdder();
    final LongAdder serverErrors = new LongAdder();
    final Map<String, LongAdder> errorKinds = new ConcurrentHashMap<>();
    private final long[] tailNext;

    SoakLoad(URI base, String topic, Settings settings) {
        this.base = base;
        this.topic = topic;
        this.settings = settings;
        this.acked = new Ledger(settings.partitions());
        this.read = new Ledger(settings.partitions());
        this.tailNext = new long[settings.partitions()];
    }

    void start() {
        for (int i = 0; i < settings.producers(); i++) {
            int id = i;
            producerThreads.add(spawn("soak-producer-" + i, () -> produce(id)));
        }
        spawn("soak-tail-reader", this::tail);
        if (settings.replay()) {
            spawn("soak-replay-reader", this::replay);
        }
        for (int i = 0; i < settings.longPollers(); i++) {
            int partition = i % settings.partitions();
            spawn("soak-long-poller-" + i, () -> longPoll(partition));
        }
        for (int i = 0; i < settings.streams(); i++) {
            int partition = (i + 1) % settings.partitions();
            spawn("soak-stream-" + i, () -> stream(partition));
        }
    }

    /**
     * Stops the producers and waits for their last requests, so that every acknowledgement is in the ledger
     * before the read-back is judged; the readers go on.
     */
    void stopProducing() throws InterruptedException {
        producing.set(false);
        for (Thread t : producerThreads) {
            t.join(TimeUnit.SECONDS.toMillis(70));
        }
    }

    /** Waits until the tail reader has read up to every partition's acknowledged end, or the timeout passes. */
    boolean awaitTailCaughtUp(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            boolean done = true;
            for (int p = 0; p < settings.partitions(); p++) {
                done &= read.count(p) >= acked.count(p);
            }
            if (done) {
                return true;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
        }
        return false;
    }

    void stopAll() throws InterruptedException {
        producing.set(false);
        reading.set(false);
        synchronized (streamsOpen) {
            for (AutoCloseable c : streamsOpen) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // the stream is being dropped anyway
                }
            }
        }
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(70));
        }
    }

    private Thread spawn(String name, Runnable body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (RuntimeException e) {
                error("thread " + name + " died", e.toString());
            }
        }, name);
        t.setDaemon(true);
        threads.add(t);
        t.start();
        return t;
    }

    private void error(String kind, String detail) {
        errors.increment();
        LongAdder n = errorKinds.computeIfAbsent(kind, k -> new LongAdder());
        n.increment();
        if (n.sum() <= 3) {
            Workspace.log("soak: " + kind + ": " + detail);
        }
    }

    private void status(String what, int status, String body) {
        if (status >= 500) {
            serverErrors.increment();
        }
        error(what + " " + status, body.length() > 300 ? body.substring(0, 300) : body);
    }

    // ---- producers

    private void produce(int id) {
        URI uri = base.resolve("/v1/topics/" + topic + "/records");
        long intervalNanos = (long) (1e9 / settings.requestsPerSecond());
        long next = System.nanoTime();
        long seq = 0;
        int partition = id % settings.partitions();
        String pad = "x".repeat(Math.max(0, settings.valueBytes() - 24));
        while (producing.get()) {
            long now = System.nanoTime();
            if (now < next) {
                LockSupport.parkNanos(next - now);
                continue;
            }
            next = Math.max(next + intervalNanos, now - intervalNanos); // no burst to catch up after a stall
            String[] values = new String[settings.recordsPerRequest()];
            StringBuilder body = new StringBuilder(values.length * (settings.valueBytes() + 32) + 32);
            body.append("{\"records\":[");
            for (int i = 0; i < values.length; i++) {
                values[i] = "p" + id + "-" + (seq++) + "-" + pad;
                body.append(i == 0 ? "" : ",").append("{\"partition\":").append(partition)
                        .append(",\"value\":\"").append(values[i]).append("\"}");
            }
            body.append("]}");
            byte[] bytes = body.toString().getBytes(StandardCharsets.US_ASCII);
            long start = System.nanoTime();
            try {
                BlockingHttp.Posted r = BlockingHttp.post(uri, "application/json", bytes, 0, bytes.length, CONNECT, READ);
                produceLatency.recordValue(Math.max(1, (System.nanoTime() - start) / 1000));
                if (r.status() != 200) {
                    status("produce", r.status(), r.bodyText());
                } else {
                    JsonNode offsets = JSON.readTree(r.body()).path("offsets");
                    if (offsets.size() != values.length) {
                        error("produce answer", "offsets " + offsets.size() + " for " + values.length + " records");
                    }
                    for (int i = 0; i < offsets.size() && i < values.length; i++) {
                        JsonNode o = offsets.get(i);
                        acked.add(o.path("partition").asInt(), o.path("offset").asLong(), values[i]);
                    }
                    producedRecords.add(values.length);
                }
            } catch (IOException e) {
                error("produce transport", e.toString());
            }
            partition = (partition + 1) % settings.partitions();
        }
    }

    // ---- readers

    private URI fetchUri(int partition, long offset, int maxRecords, int waitMs) {
        return base.resolve("/v1/topics/" + topic + "/partitions/" + partition + "/records?offset=" + offset
                + "&maxRecords=" + maxRecords + (waitMs > 0 ? "&waitMs=" + waitMs : ""));
    }

    /** One fetch; null after an error (counted). */
    private JsonNode fetch(String what, URI uri, boolean timed) {
        long start = System.nanoTime();
        try (BlockingHttp.Response r = BlockingHttp.get(uri, CONNECT, READ)) {
            byte[] body = r.bytes();
            if (timed) {
                fetchLatency.recordValue(Math.max(1, (System.nanoTime() - start) / 1000));
            }
            if (r.status() != 200) {
                status(what, r.status(), new String(body, StandardCharsets.UTF_8));
                return null;
            }
            return JSON.readTree(body);
        } catch (IOException e) {
            error(what + " transport", e.toString());
            return null;
        }
    }

    private void tail() {
        while (reading.get()) {
            long got = 0;
            for (int p = 0; p < settings.partitions(); p++) {
                JsonNode page = fetch("fetch", fetchUri(p, tailNext[p], 1000, 0), true);
                if (page == null) {
                    pause(500);
                    continue;
                }
                for (JsonNode rec : page.path("records")) {
                    long offset = rec.path("offset").asLong();
                    if (offset != tailNext[p]) {
                        error("tail gap", "partition " + p + " expected offset " + tailNext[p] + ", got " + offset);
                    }
                    read.add(p, offset, rec.path("value").asText());
                    tailNext[p] = offset + 1;
                    got++;
                }
                tailRecords.add(page.path("records").size());
            }
            if (got == 0) {
                pause(100);
            }
        }
    }

    private void replay() {
        int p = 0;
        while (reading.get()) {
            p = (p + 1) % settings.partitions();
            JsonNode first = fetch("replay", fetchUri(p, 0, 1, 0), false);
            if (first == null) {
                // offset 0 may be gone by retention (not configured here): 416 counted as an error above
                pause(1000);
                continue;
            }
            long hw = first.path("highWatermark").asLong();
            long start = first.path("logStartOffset").asLong();
            long window = 10_000;
            if (hw - start < 2 * window) {
                pause(1000);
                continue;
            }
            long offset = start + ThreadLocalRandom.current().nextLong(hw - start - window);
            long end = offset + window;
            while (offset < end && reading.get()) {
                JsonNode page = fetch("replay", fetchUri(p, offset, 2000, 0), false);
                if (page == null) {
                    break;
                }
                for (JsonNode rec : page.path("records")) {
                    long o = rec.path("offset").asLong();
                    if (o != offset) {
                        error("replay gap", "partition " + p + " expected offset " + offset + ", got " + o);
                    }
                    offset = o + 1;
                    replayRecords.increment();
                }
                if (page.path("records").isEmpty()) {
                    error("replay empty page", "partition " + p + " offset " + offset + " below " + hw);
                    break;
                }
            }
            pause(1000);
        }
    }

    private void longPoll(int partition) {
        JsonNode first = null;
        while (first == null && reading.get()) {
            first = fetch("long-poll", fetchUri(partition, 0, 1, 0), false);
        }
        long next = first == null ? 0 : first.path("highWatermark").asLong();
        while (reading.get()) {
            JsonNode page = fetch("long-poll", fetchUri(partition, next, 1000, 5000), false);
            if (page == null) {
                pause(500);
                continue;
            }
            longPollAnswers.increment();
            for (JsonNode rec : page.path("records")) {
                long o = rec.path("offset").asLong();
                if (o != next) {
                    error("long-poll gap", "partition " + partition + " expected " + next + ", got " + o);
                }
                next = o + 1;
                longPollRecords.increment();
            }
        }
    }

    private void stream(int partition) {
        while (reading.get()) {
            URI uri = base.resolve("/v1/topics/" + topic + "/partitions/" + partition + "/stream");
            try {
                BlockingHttp.Response r = BlockingHttp.get(uri, CONNECT, Duration.ofSeconds(30), "Accept", "text/event-stream");
                synchronized (streamsOpen) {
                    streamsOpen.add(r::disconnect);
                }
                if (r.status() != 200) {
                    status("stream", r.status(), r.text(300));
                    r.disconnect();
                    pause(1000);
                    continue;
                }
                BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8));
                long expected = -1;
                for (String line = in.readLine(); line != null && reading.get(); line = in.readLine()) {
                    if (line.startsWith("id:")) {
                        long id = Long.parseLong(line.substring(3).trim());
                        if (expected >= 0 && id != expected) {
                            error("stream gap", "partition " + partition + " expected " + expected + ", got " + id);
                        }
                        expected = id + 1;
                        streamRecords.increment();
                    }
                }
                r.disconnect();
                if (reading.get()) {
                    error("stream ended", "partition " + partition);
                }
            } catch (IOException | RuntimeException e) {
                if (reading.get()) {
                    error("stream transport", e.toString());
                    pause(1000);
                }
            }
        }
    }

    private static void pause(long millis) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    /** p99 of the interval's values in ms, and resets the interval; NaN when nothing was recorded. */
    static double p99Millis(Recorder recorder) {
        Histogram h = recorder.getIntervalHistogram();
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(99) / 1000.0;
    }

    /** A running total that can be read as a per-interval delta. */
    static final class Delta {
        private final AtomicLong last = new AtomicLong();

        long next(long total) {
            return total - last.getAndSet(total);
        }
    }
}
