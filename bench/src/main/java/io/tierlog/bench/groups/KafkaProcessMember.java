package io.tierlog.bench.groups;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A Kafka group member in a child JVM ({@link KafkaMemberMain}), started ahead and joined on {@link #go()}, so a
 * join trial does not count a JVM start; {@link #kill()} is SIGKILL. Its stdout lines are timestamped by this
 * process when read (a pipe's delay, well under a millisecond on an idle machine, is counted on Kafka's side).
 */
final class KafkaProcessMember implements Member {
    private final String name;
    private final Process process;
    private final Tracker tracker;
    private final CountDownLatch ready = new CountDownLatch(1);
    private volatile Set<Integer> owned = Set.of();

    KafkaProcessMember(String name, String bootstrap, String group, String topic, Tracker tracker, Path log) {
        this.name = name;
        this.tracker = tracker;
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", System.getProperty("java.class.path"), KafkaMemberMain.class.getName(), bootstrap, group, topic));
        try {
            process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start a Kafka member process", e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
        Thread reader = new Thread(this::read, "kafka-member-out-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    private void read() {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                long now = System.nanoTime();
                if (line.equals("READY")) {
                    ready.countDown();
                } else if (line.startsWith("TAKE ")) {
                    tracker.firstRecord(name, Integer.parseInt(line.substring(5).trim()), now);
                } else if (line.startsWith("OWNED")) {
                    Set<Integer> s = new TreeSet<>();
                    for (String p : line.substring(5).trim().split(",")) {
                        if (!p.isBlank()) {
                            s.add(Integer.parseInt(p.trim()));
                        }
                    }
                    owned = Set.copyOf(s);
                }
            }
        } catch (IOException ignored) {
            // the process ended
        }
    }

    /** Waits until the child JVM has created its consumer. */
    void awaitReady() {
        try {
            if (!ready.await(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException("Kafka member process " + name + " not ready in 120 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Waits until the child has its consumer, then lets it subscribe. */
    void go() {
        awaitReady();
        try {
            OutputStream in = process.getOutputStream();
            in.write("GO\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Set<Integer> owned() {
        return owned;
    }

    @Override
    public void kill() {
        process.destroyForcibly();
    }

    @Override
    public void close() {
        try {
            OutputStream in = process.getOutputStream();
            in.write("LEAVE\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
