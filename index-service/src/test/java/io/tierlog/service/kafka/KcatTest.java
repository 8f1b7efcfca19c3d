package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * kcat (librdkafka: a second, independent implementation of the protocol) against the listener: metadata,
 * produce with and without compression, consume from the beginning, the same offsets as HTTP. Skipped where kcat
 * is not on the PATH.
 */
@QuarkusTest
class KcatTest {
    @Inject
    KafkaListener listener;

    @BeforeEach
    void requireKcat() {
        boolean found = false;
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            found |= Files.isExecutable(Path.of(dir, "kcat"));
        }
        Assumptions.assumeTrue(found, "kcat is not on the PATH");
    }

    private List<String> kcat(String stdin, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("kcat", "-b", "127.0.0.1:" + listener.port()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        // A kcat that never ends (a group that never gets its partitions) is killed, so the test fails, not hangs.
        java.util.concurrent.CompletableFuture.delayedExecutor(90, TimeUnit.SECONDS).execute(p::destroyForcibly);
        try (var in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("kcat finished").isTrue();
        assertThat(p.exitValue()).as("kcat %s exit code; output:%n%s", command, out).isZero();
        return out.lines().toList();
    }

    @Test
    void kcatProducesAndConsumes() throws Exception {
        String topic = "kcat-" + UUID.randomUUID().toString().substring(0, 8);
        given().contentType(ContentType.JSON).body("{\"name\":\"" + topic + "\",\"partitions\":1}").post("/v1/topics")
                .then().statusCode(201);

        assertThat(String.join("\n", kcat(null, "-L", "-t", topic))).contains(topic).contains("1 partitions");

        kcat("{\"n\":0}\n{\"n\":1}\n", "-P", "-t", topic, "-p", "0");
        kcat("{\"n\":2}\n{\"n\":3}\n", "-P", "-t", topic, "-p", "0", "-z", "lz4");
        kcat("{\"n\":4}\n", "-P", "-t", topic, "-p", "0", "-z", "gzip");

        List<String> consumed = kcat(null, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-f", "%o %s\\n");
        assertThat(consumed).containsExactly("0 {\"n\":0}", "1 {\"n\":1}", "2 {\"n\":2}", "3 {\"n\":3}", "4 {\"n\":4}");
        given().get("/v1/topics/" + topic + "/partitions/0/records?offset=3").then().statusCode(200)
                .body("records[0].offset", org.hamcrest.Matchers.equalTo(3))
                .body("records[0].value.n", org.hamcrest.Matchers.equalTo(3));
    }

    /**
     * librdkafka reading a partition whose every answer ends in part of a batch (ADR 0076: a range cut by its byte
     * limit is filled to it, as Kafka's broker fills it): each record once, in order.
     */
    @Test
    void kcatReadsEveryRecordOnceWhenEachAnswerEndsInPartOfABatch() throws Exception {
        String topic = "kcat-part-" + UUID.randomUUID().toString().substring(0, 8);
        given().contentType(ContentType.JSON).body("{\"name\":\"" + topic + "\",\"partitions\":1}").post("/v1/topics")
                .then().statusCode(201);
        List<String> want = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            String value = i + "-" + "v".repeat(1_000);
            kcat(value + "\n", "-P", "-t", topic, "-p", "0"); // a batch each, about 1,070 bytes
            want.add(i + " " + value);
        }
        assertThat(kcat(null, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-f", "%o %s\\n",
                "-X", "fetch.message.max.bytes=2700")).containsExactlyElementsOf(want);
    }

    /**
     * librdkafka's read_committed consumer, a second implementation of the aborted-transaction filter: of a
     * kafka-clients producer's committed and aborted transactions it prints only the committed records, and never a
     * marker.
     */
    @Test
    void kcatReadCommittedSkipsAbortedTransactions() throws Exception {
        String topic = "kcat-txn-" + UUID.randomUUID().toString().substring(0, 8);
        given().contentType(ContentType.JSON).body("{\"name\":\"" + topic + "\",\"partitions\":1}").post("/v1/topics")
                .then().statusCode(201);
        java.util.Properties p = new java.util.Properties();
        p.put("bootstrap.servers", "127.0.0.1:" + listener.port());
        p.put("transactional.id", "kcat-tx-" + UUID.randomUUID());
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<String, String>(p,
                new org.apache.kafka.common.serialization.StringSerializer(),
                new org.apache.kafka.common.serialization.StringSerializer())) {
            producer.initTransactions();
            for (String outcome : List.of("commit", "abort", "commit")) {
                producer.beginTransaction();
                for (int i = 0; i < 2; i++) {
                    producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0, null, outcome + i));
                }
                if (outcome.equals("commit")) {
                    producer.commitTransaction();
                } else {
                    producer.flush();
                    producer.abortTransaction();
                }
            }
        }
        // Offsets: 0-1 committed, 2 marker, 3-4 aborted, 5 marker, 6-7 committed, 8 marker.
        assertThat(kcat(null, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-f", "%o %s\\n",
                "-X", "isolation.level=read_committed"))
                .containsExactly("0 commit0", "1 commit1", "6 commit0", "7 commit1");
        assertThat(kcat(null, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-f", "%o %s\\n",
                "-X", "isolation.level=read_uncommitted"))
                .containsExactly("0 commit0", "1 commit1", "3 abort0", "4 abort1", "6 commit0", "7 commit1");
    }

    /**
     * librdkafka's idempotent producer (InitProducerId, its own sequence numbering) and its balanced consumer group
     * (the classic protocol through the service's assignment), which commits what it read: the group's offsets over
     * HTTP.
     */
    @Test
    void kcatIdempotentProducerAndConsumerGroup() throws Exception {
        String topic = "kcat-g-" + UUID.randomUUID().toString().substring(0, 8);
        String group = "kcat-group-" + UUID.randomUUID().toString().substring(0, 8);
        given().contentType(ContentType.JSON).body("{\"name\":\"" + topic + "\",\"partitions\":2}").post("/v1/topics")
                .then().statusCode(201);
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            lines.append("k").append(i).append(":v").append(i).append('\n');
        }
        kcat(lines.toString(), "-P", "-t", topic, "-K", ":", "-X", "enable.idempotence=true", "-X", "acks=all");
        long total = 0;
        for (int p = 0; p < 2; p++) {
            total += given().get("/v1/topics/" + topic + "/partitions/" + p + "/records?offset=0&maxRecords=1")
                    .then().statusCode(200).extract().jsonPath().getLong("highWatermark");
        }
        assertThat(total).isEqualTo(20);

        List<String> consumed = kcat(null, "-G", group, "-o", "beginning", "-e", "-f", "%p %o %s\\n",
                "-X", "enable.auto.commit=true", "-X", "auto.commit.interval.ms=100", topic);
        assertThat(consumed).hasSize(20);
        // Closing commits what was read: each partition's next offset is its end.
        List<Integer> committed = given().get("/v1/groups/" + group + "/lag").then().statusCode(200).extract()
                .jsonPath().getList("partitions.lag", Integer.class);
        assertThat(committed).hasSize(2).containsOnly(0);
    }
}
