package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.tierlog.service.kafka.connect.CountingSourceConnector;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka Connect 4.4.0 in distributed mode against the listener: two workers (child processes on Kafka's own class
 * path) form a group of protocol type {@code connect}, create their compacted config, offset and status topics, and
 * run a two-task source connector ({@link CountingSourceConnector}) with the tasks spread over both workers by the
 * leader's assignment. One worker is killed (kill -9); once its session ends the other runs both tasks, and the
 * dead worker's task resumes from its committed source offset.
 */
@QuarkusTest
class KafkaConnectTest {
    private static final String RUN = Long.toString(System.currentTimeMillis(), 36);
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Inject
    KafkaListener listener;

    private record Worker(Process process, URI rest, String id) {
    }

    private Worker startWorker(String classpath, String name) throws Exception {
        int port = freePort();
        Path dir = Files.createDirectories(Path.of("target", "connect-" + RUN, name)).toAbsolutePath();
        Path props = dir.resolve("worker.properties");
        Files.writeString(props, String.join("\n",
                "bootstrap.servers=" + KafkaClients.bootstrap(listener.port()),
                "group.id=connect-" + RUN,
                "config.storage.topic=connect-configs-" + RUN,
                "offset.storage.topic=connect-offsets-" + RUN,
                "status.storage.topic=connect-status-" + RUN,
                "config.storage.replication.factor=1",
                "offset.storage.replication.factor=1",
                "status.storage.replication.factor=1",
                "offset.storage.partitions=2",
                "status.storage.partitions=2",
                "key.converter=org.apache.kafka.connect.storage.StringConverter",
                "value.converter=org.apache.kafka.connect.storage.StringConverter",
                "listeners=http://127.0.0.1:" + port,
                "rest.advertised.host.name=127.0.0.1",
                "plugin.discovery=service_load",
                // A dead worker's tasks move once its session ends, not after the default 5 minutes' grace.
                "scheduled.rebalance.max.delay.ms=0",
                "session.timeout.ms=6000",
                "heartbeat.interval.ms=1000",
                "offset.flush.interval.ms=500"));
        String testClasses = Path.of("target", "test-classes").toAbsolutePath().toString();
        String launcher = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(launcher, "-Xmx256m",
                "-cp", classpath + java.io.File.pathSeparator + testClasses));
        command.addAll(KafkaToolsClasspath.SHORT_LIVED_JVM);
        command.addAll(List.of("org.apache.kafka.connect.cli.ConnectDistributed", props.toString()));
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("worker.log").toFile()).start();
        return new Worker(p, URI.create("http://127.0.0.1:" + port), "127.0.0.1:" + port);
    }

    private static int freePort() throws Exception {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static HttpResponse<String> call(URI base, String method, String path, String body) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json");
        r.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void await(String what, Duration limit, Worker[] workers, BooleanSupplier done) {
        Instant deadline = Instant.now().plus(limit);
        while (!done.getAsBoolean()) {
            for (Worker w : workers) {
                assertThat(w.process().isAlive()).as("worker %s alive while waiting for %s", w.id(), what).isTrue();
            }
            assertThat(Instant.now()).as(what).isBefore(deadline);
            try {
                Thread.sleep(200); // polling another process's REST API: there is nothing to wait on
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** The connector's tasks by worker id, from the status API; empty if not all RUNNING. */
    private static Map<Integer, String> runningTasks(Worker via, String connector) {
        try {
            HttpResponse<String> r = call(via.rest(), "GET", "/connectors/" + connector + "/status", null);
            if (r.statusCode() != 200) {
                return Map.of();
            }
            JsonPath status = JsonPath.from(r.body());
            List<Map<String, Object>> tasks = status.getList("tasks");
            Map<Integer, String> out = new HashMap<>();
            for (Map<String, Object> t : tasks) {
                if (!"RUNNING".equals(t.get("state"))) {
                    return Map.of();
                }
                out.put(((Number) t.get("id")).intValue(), (String) t.get("worker_id"));
            }
            return out;
        } catch (Exception e) {
            return Map.of(); // the worker is between rebalances
        }
    }

    /** The highest seq each task has written to the topic so far. */
    private Map<String, Long> lastSeqByTask(String topic) {
        Map<String, Long> last = new HashMap<>();
        try (KafkaConsumer<String, String> c = KafkaClients.consumer(listener.port(), Map.of())) {
            List<TopicPartition> parts = new ArrayList<>();
            c.partitionsFor(topic).forEach(i -> parts.add(new TopicPartition(topic, i.partition())));
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> ends = c.endOffsets(parts);
            Instant deadline = Instant.now().plusSeconds(30);
            while (parts.stream().anyMatch(tp -> c.position(tp) < ends.get(tp))) {
                assertThat(Instant.now()).as("reading " + topic + " to its end").isBefore(deadline);
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    String[] f = r.value().split(" ");
                    last.merge(f[0], Long.parseLong(f[1].substring("seq-".length())), Math::max);
                }
            }
        }
        return last;
    }

    @Test
    void twoWorkersShareAConnectorsTasksAndTheSurvivorTakesOverAKilledWorkersTask() throws Exception {
        String classpath = KafkaToolsClasspath.get();
        String topic = "connect-counts-" + RUN;
        Worker a = startWorker(classpath, "a");
        Worker b = startWorker(classpath, "b");
        Worker[] both = {a, b};
        try {
            await("both workers' REST APIs", Duration.ofSeconds(90), both, () -> {
                try {
                    return call(a.rest(), "GET", "/connectors", null).statusCode() == 200
                            && call(b.rest(), "GET", "/connectors", null).statusCode() == 200;
                } catch (Exception e) {
                    return false;
                }
            });
            String config = "{\"name\":\"counting\",\"config\":{\"connector.class\":\""
                    + CountingSourceConnector.class.getName() + "\",\"tasks.max\":\"2\",\"topic\":\"" + topic
                    // The worker creates the topic (KIP-158): Tierlog creates no topic on a Metadata request.
                    + "\",\"topic.creation.default.partitions\":\"2\","
                    + "\"topic.creation.default.replication.factor\":\"1\"}}";
            await("the connector created", Duration.ofSeconds(60), both, () -> {
                try {
                    int status = call(a.rest(), "POST", "/connectors", config).statusCode();
                    return status == 201 || status == 409;
                } catch (Exception e) {
                    return false;
                }
            });
            await("both tasks running, one on each worker", Duration.ofSeconds(60), both,
                    () -> new HashSet<>(runningTasks(a, "counting").values()).equals(Set.of(a.id(), b.id())));
            int onB = runningTasks(a, "counting").entrySet().stream().filter(e -> e.getValue().equals(b.id()))
                    .findFirst().orElseThrow().getKey();
            await("records from both tasks", Duration.ofSeconds(30), both,
                    () -> lastSeqByTask(topic).keySet().equals(Set.of("task-0", "task-1")));

            try (Admin admin = KafkaClients.admin(listener.port())) {
                GroupListing g = admin.listGroups().all().get().stream()
                        .filter(l -> l.groupId().equals("connect-" + RUN)).findFirst().orElseThrow();
                assertThat(g.type()).contains(GroupType.CLASSIC);
                assertThat(g.protocol()).isEqualTo("connect");
            }

            b.process().destroyForcibly().waitFor(); // kill -9: no LeaveGroup, its session has to end
            long beforeKill = lastSeqByTask(topic).get("task-" + onB);
            Worker[] survivor = {a};
            await("both tasks running on the surviving worker", Duration.ofSeconds(60), survivor,
                    () -> runningTasks(a, "counting").values().stream().allMatch(a.id()::equals)
                            && runningTasks(a, "counting").size() == 2);
            await("the dead worker's task writing again on the survivor", Duration.ofSeconds(30), survivor,
                    () -> lastSeqByTask(topic).get("task-" + onB) > beforeKill + 20);
        } finally {
            for (Worker w : both) {
                w.process().destroyForcibly().waitFor();
            }
        }
    }
}
