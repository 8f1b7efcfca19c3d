package io.tierlog.service.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Two packaged index-service instances on one hot volume under {@code work} (cleared first), each with its Kafka
 * listener on a free loopback port, started and ready. Closing kills both (SIGKILL).
 */
record KafkaInstances(PackagedService a, int kafkaA, PackagedService b, int kafkaB) implements AutoCloseable {
    static final Duration STARTUP = Duration.ofSeconds(120); // generous: JVM starts are slow on a loaded 2-core machine

    static KafkaInstances start(Path work, String... properties) throws Exception {
        return start(work, List.of(), List.of(), properties);
    }

    /** As {@link #start(Path, String...)}, with {@code onlyA} and {@code onlyB} given to one instance each. */
    static KafkaInstances start(Path work, List<String> onlyA, List<String> onlyB, String... properties)
            throws Exception {
        PackagedService.deleteTree(work);
        Path hot = work.resolve("hot");
        Files.createDirectories(work.resolve("a"));
        Files.createDirectories(work.resolve("b"));
        int kafkaA = freePort();
        int kafkaB = freePort();
        PackagedService a = PackagedService.start(work.resolve("a"), hot, with(properties, onlyA, kafkaA));
        PackagedService b = PackagedService.start(work.resolve("b"), hot, with(properties, onlyB, kafkaB));
        KafkaInstances both = new KafkaInstances(a, kafkaA, b, kafkaB);
        try {
            a.awaitReady(STARTUP);
            b.awaitReady(STARTUP);
        } catch (Exception | AssertionError e) {
            both.close();
            throw e;
        }
        return both;
    }

    private static String[] with(String[] properties, List<String> own, int kafkaPort) {
        List<String> all = new ArrayList<>(List.of(properties));
        all.addAll(own);
        all.add(0, "-Dtierlog.kafka.port=" + kafkaPort);
        return all.toArray(String[]::new);
    }

    static Admin admin(int port) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return Admin.create(p);
    }

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws InterruptedException {
        a.process().destroyForcibly().waitFor();
        b.process().destroyForcibly().waitFor();
    }
}
