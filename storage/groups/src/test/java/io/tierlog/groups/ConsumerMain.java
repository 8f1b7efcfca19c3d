package io.tierlog.groups;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.io.AtomicFiles;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A consumer process for {@link MultiProcessGroupTest}: it embeds its own {@link GroupCoordinator} on the shared
 * directory (as an instance of the service would), heartbeats, "processes" records {@code 0..RECORDS-1} of each
 * partition it owns and commits after each one through {@link GroupCoordinator#commitAs} (the commit is a file per
 * partition, standing in for {@code __consumer_offsets}). It logs, flushed per line:
 * {@code G p micros} when it starts owning p, {@code R p micros} when it stops, {@code P p offset} per record
 * processed, {@code C p next} per commit, {@code F p offset type} per refused commit. It leaves and exits when its stdin closes.
 *
 * <p>Args: dataDir name sessionTimeoutMs log
 */
public final class ConsumerMain {
    static final String GROUP = "workers";
    static final String TOPIC = "orders";
    static final int PARTITIONS = 12;
    static final int RECORDS = 150;

    private static volatile boolean stop;
    /** Wall-clock end of the lease of the last answered heartbeat: its send time plus the session timeout. */
    private static long leaseEndMicros;

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        String name = args[1];
        long session = Long.parseLong(args[2]);
        PrintStream log = new PrintStream(new FileOutputStream(args[3], true), true, StandardCharsets.UTF_8);
        Thread stdin = new Thread(() -> {
            try (InputStream in = System.in) {
                while (in.read() >= 0) {
                    // wait for EOF
                }
            } catch (IOException ignored) {
                // treated as EOF
            }
            stop = true;
        });
        stdin.setDaemon(true);
        stdin.start();

        GroupCoordinator coordinator = new GroupCoordinator(new GroupStateStore(dir), t -> PARTITIONS,
                Clock.systemUTC(), Duration.ofMillis(200));
        String memberId = null;
        int epoch = 0;
        Set<Integer> owns = new TreeSet<>();
        long lastAnsweredSend = 0;
        long nextHeartbeat = 0;
        leaseEndMicros = Long.MAX_VALUE;
        while (!stop) {
            long now = System.nanoTime();
            if (!owns.isEmpty() && now - lastAnsweredSend > session * 1_000_000) {
                release(log, owns); // our lease ran out: stop consuming, rejoin under our id
                epoch = 0;
            }
            if (now >= nextHeartbeat) {
                long sent = System.nanoTime();
                long sentMicros = micros();
                try {
                    HeartbeatAnswer a = coordinator.heartbeat(GROUP, new Heartbeat(memberId, epoch, Set.of(TOPIC), session,
                            List.of(new TopicPartitions(TOPIC, List.copyOf(owns))), name));
                    Set<Integer> next = new TreeSet<>();
                    a.assignment().forEach(tps -> next.addAll(tps.partitions()));
                    Set<Integer> gone = new TreeSet<>(owns);
                    gone.removeAll(next);
                    owns.removeAll(gone);
                    release(log, gone);
                    for (int p : next) {
                        if (owns.add(p)) {
                            log.println("G " + p + " " + micros());
                        }
                    }
                    memberId = a.memberId();
                    epoch = a.memberEpoch();
                    lastAnsweredSend = sent;
                    leaseEndMicros = sentMicros + session * 1_000;
                    nextHeartbeat = sent + a.heartbeatIntervalMs() * 1_000_000;
                } catch (TierlogException e) {
                    release(log, owns);
                    if (e.type() == ErrorType.UNKNOWN_MEMBER) {
                        memberId = null;
                    }
                    epoch = 0;
                    nextHeartbeat = System.nanoTime();
                    continue;
                }
            }
            for (int p : List.copyOf(owns)) {
                if (micros() > leaseEndMicros) {
                    release(log, owns); // never process past the lease: the service may have expired us
                    epoch = 0;
                    break;
                }
                long offset = committed(dir, p);
                if (offset >= RECORDS) {
                    continue;
                }
                log.println("P " + p + " " + offset);
                try {
                    coordinator.commitAs(GROUP, memberId, epoch, List.of(new TopicPartition(TOPIC, p)),
                            () -> AtomicFiles.replace(commitFile(dir, p), Long.toString(offset + 1).getBytes(StandardCharsets.UTF_8)));
                    log.println("C " + p + " " + (offset + 1));
                } catch (TierlogException e) {
                    log.println("F " + p + " " + offset + " " + e.type());
                    release(log, owns); // fenced or expired: drop everything, heartbeat again at once
                    epoch = 0;
                    nextHeartbeat = System.nanoTime();
                    break;
                }
            }
            Thread.sleep(20);
        }
        if (memberId != null) {
            release(log, owns);
            coordinator.heartbeat(GROUP, new Heartbeat(memberId, Heartbeat.LEAVE, Set.of(), 0, null, null));
        }
        log.println("EXIT");
    }

    /** Logs the release of {@code partitions}: now, or when the lease ended if that was earlier. */
    private static void release(PrintStream log, Set<Integer> partitions) {
        long at = Math.min(micros(), leaseEndMicros);
        for (int p : partitions) {
            log.println("R " + p + " " + at);
        }
        partitions.clear();
    }

    static long micros() {
        Instant i = Instant.now();
        return i.getEpochSecond() * 1_000_000 + i.getNano() / 1_000;
    }

    static Path commitFile(Path dir, int partition) {
        return dir.resolve("commits").resolve("p" + partition);
    }

    static long committed(Path dir, int partition) throws IOException {
        try {
            return Long.parseLong(Files.readString(commitFile(dir, partition)).trim());
        } catch (NoSuchFileException e) {
            return 0;
        }
    }
}
