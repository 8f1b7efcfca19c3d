package io.tierlog.service.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

/**
 * The service instances sharing one hot volume, as Kafka brokers (docs/kafka.md, "Several instances", ADR 0021).
 * Each instance claims the lowest free node id by holding an exclusive lock on {@code <dir>/<id>.lock} (the OS
 * drops it when the process dies, even by SIGKILL, so a restarted instance takes a free id again) and writes
 * {@code <dir>/<id>.json} (host, port, rack, a beat counter) every third of the liveness timeout.
 *
 * <p><b>Liveness</b> is judged by each observer on its own monotonic clock: a broker is live while its beat counter
 * changed within the liveness timeout, so clocks that differ between machines do not matter. A file seen for the
 * first time counts as live only if its wall-clock beat time is within the timeout plus the allowed clock skew,
 * so an instance starting next to the file of a long-dead one does not advertise it. This instance is always live
 * to itself. A broker killed is dropped by the others within the timeout plus one refresh period; one that stops
 * cleanly deletes its file and is dropped at the others' next refresh.
 *
 * <p>Thread-safe: {@link #cluster()} reads a snapshot that one daemon thread replaces on every refresh; no request
 * path touches a file.
 */
final class BrokerRegistry implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(BrokerRegistry.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_NODE_ID = 10_000;

    private final Path dir;
    private final Clock clock;
    private final LongSupplier monotonicNanos;
    private final long livenessNanos;
    private final long firstSightMs;
    private final String instance = UUID.randomUUID().toString();
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final Broker self;
    private final Map<Integer, Seen> seen = new HashMap<>();
    private final ScheduledExecutorService timer;
    private long beat;
    private volatile KafkaCluster cluster;

    /** What this observer last read of a broker's file, and when (its monotonic clock) the beat last changed. */
    private record Seen(Broker broker, String instance, long beat, long changedNanos) {
    }

    private BrokerRegistry(Path dir, Clock clock, LongSupplier monotonicNanos, Duration liveness,
                           Duration maxClockSkew, FileChannel lockChannel, FileLock lock, Broker self) {
        this.dir = dir;
        this.clock = clock;
        this.monotonicNanos = monotonicNanos;
        this.livenessNanos = liveness.toNanos();
        this.firstSightMs = liveness.plus(maxClockSkew).toMillis();
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.self = self;
        this.cluster = new KafkaCluster(self, List.of(self));
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tierlog-kafka-brokers");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Claims a node id in {@code dir}, announces {@code host:port} under it and starts beating and refreshing every
     * third of {@code liveness}. The caller closes the registry on shutdown.
     */
    static BrokerRegistry join(Path dir, String host, int port, String rack, Clock clock, Duration liveness,
                               Duration maxClockSkew) throws IOException {
        BrokerRegistry registry = claim(dir, host, port, rack, clock, System::nanoTime, liveness, maxClockSkew);
        long period = Math.max(50, liveness.toMillis() / 3);
        registry.timer.scheduleWithFixedDelay(registry::refreshQuietly, period, period, TimeUnit.MILLISECONDS);
        return registry;
    }

    /** Claims a node id and announces it once; nothing beats or refreshes until {@link #refresh} is called. */
    static BrokerRegistry claim(Path dir, String host, int port, String rack, Clock clock,
                                LongSupplier monotonicNanos, Duration liveness, Duration maxClockSkew)
            throws IOException {
        Files.createDirectories(dir);
        for (int id = 0; id < MAX_NODE_ID; id++) {
            FileChannel channel = FileChannel.open(dir.resolve(id + ".lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException heldInThisJvm) {
                lock = null;
            }
            if (lock == null) {
                channel.close();
                continue;
            }
            BrokerRegistry registry = new BrokerRegistry(dir, clock, monotonicNanos, liveness, maxClockSkew,
                    channel, lock, new Broker(id, host, port, rack));
            try {
                registry.refresh();
            } catch (IOException | RuntimeException e) {
                registry.close();
                throw e;
            }
            return registry;
        }
        throw new IOException("no free Kafka node id below " + MAX_NODE_ID + " in " + dir);
    }

    /** This instance and the live brokers it knows of, as last refreshed. */
    KafkaCluster cluster() {
        return cluster;
    }

    Broker self() {
        return self;
    }

    private void refreshQuietly() {
        try {
            refresh();
        } catch (Exception e) {
            // The next refresh tries again; meanwhile the others may drop this broker, which only moves leadership.
            LOG.warnf(e, "refreshing the Kafka brokers in %s", dir);
        }
    }

    /** Beats once and re-reads every broker's file. */
    synchronized void refresh() throws IOException {
        writeBeat();
        long now = monotonicNanos.getAsLong();
        long wallNow = clock.millis();
        Map<Integer, Seen> present = new HashMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.filter(f -> f.getFileName().toString().matches("\\d+\\.json")).toList()) {
                JsonNode node;
                try {
                    node = JSON.readTree(file.toFile());
                } catch (IOException goneOrTorn) {
                    continue; // deleted by a stopping broker meanwhile; files are replaced atomically, never torn
                }
                if (node == null || !node.hasNonNull("nodeId")) {
                    continue;
                }
                Broker b = new Broker(node.get("nodeId").asInt(), node.path("host").asText(), node.path("port").asInt(),
                        node.hasNonNull("rack") ? node.get("rack").asText() : null);
                String inst = node.path("instance").asText();
                long beatNo = node.path("beat").asLong();
                Seen before = seen.get(b.nodeId());
                long changed;
                if (before == null) {
                    boolean fresh = wallNow - node.path("beatMs").asLong() <= firstSightMs;
                    changed = fresh ? now : now - livenessNanos - 1;
                } else if (!before.instance().equals(inst) || before.beat() != beatNo) {
                    changed = now;
                } else {
                    changed = before.changedNanos();
                }
                present.put(b.nodeId(), new Seen(b, inst, beatNo, changed));
            }
        }
        seen.clear();
        seen.putAll(present);
        List<Broker> live = new ArrayList<>();
        live.add(self);
        for (Seen s : present.values()) {
            if (s.broker().nodeId() != self.nodeId() && now - s.changedNanos() <= livenessNanos) {
                live.add(s.broker());
            }
        }
        live.sort(Comparator.comparingInt(Broker::nodeId));
        cluster = new KafkaCluster(self, List.copyOf(live));
    }

    private void writeBeat() throws IOException {
        ObjectNode node = JSON.createObjectNode().put("nodeId", self.nodeId()).put("host", self.host())
                .put("port", self.port()).put("instance", instance).put("beat", ++beat).put("beatMs", clock.millis());
        if (self.rack() != null) {
            node.put("rack", self.rack());
        }
        Path target = dir.resolve(self.nodeId() + ".json");
        Path tmp = dir.resolve("." + self.nodeId() + ".json." + instance + ".tmp");
        Files.write(tmp, JSON.writeValueAsBytes(node));
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Stops beating and withdraws this broker: its file is deleted, its node id freed. */
    @Override
    public synchronized void close() {
        timer.shutdownNow();
        try {
            Files.deleteIfExists(dir.resolve(self.nodeId() + ".json"));
        } catch (IOException e) {
            LOG.debugf(e, "withdrawing Kafka broker %d", self.nodeId());
        }
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            LOG.debugf(e, "releasing Kafka node id %d", self.nodeId());
        }
    }
}
