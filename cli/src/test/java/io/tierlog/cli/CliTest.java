package io.tierlog.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.client.TestService;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CLI's commands run in-process with picocli's {@code CommandLine.execute}, against the packaged service:
 * their output and exit codes.
 */
@Tag("slow")
class CliTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static TestService service;

    record Run(int code, String out, String err) {
        JsonNode json() throws Exception {
            return JSON.readTree(out);
        }
    }

    @BeforeAll
    static void start() throws Exception {
        service = TestService.shared();
    }

    /** Runs {@code tierlog args} with TIERLOG_URL and TIERLOG_TOKEN set (the admin token) and {@code stdin}. */
    static Run tierlog(String stdin, String... args) {
        return tierlogAs(Map.of("TIERLOG_URL", service.url(), "TIERLOG_TOKEN", TestService.ADMIN_TOKEN), stdin, args);
    }

    static Run tierlogAs(Map<String, String> env, String stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        TierlogCli root = new TierlogCli(env).withStdin(new ByteArrayInputStream(
                (stdin == null ? "" : stdin).getBytes(StandardCharsets.UTF_8)));
        var cl = TierlogCli.commandLine(root);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void topicsAreCreatedListedDescribedAlteredAndDeleted() throws Exception {
        String topic = TestService.uniqueName("cli-topics");
        Run created = tierlog(null, "topics", "create", topic, "--partitions", "3", "--config", "retention.ms=3600000");
        assertThat(created.code()).as(created.err()).isZero();
        assertThat(created.out()).contains("created topic " + topic + " with 3 partitions");

        Run list = tierlog(null, "topics", "list");
        assertThat(list.out()).containsPattern("(?m)^" + topic + "\\s+3$");
        Run listJson = tierlog(null, "topics", "list", "-o", "json");
        assertThat(listJson.json().path("topics").findValuesAsText("name")).contains(topic);

        Run described = tierlog(null, "--output", "json", "topics", "describe", topic);
        assertThat(described.json().path("config").path("retention.ms").asLong()).isEqualTo(3_600_000);
        assertThat(described.json().path("partitionStates")).hasSize(3);
        assertThat(tierlog(null, "topics", "describe", topic).out()).contains("retention.ms = 3600000")
                .contains("HIGH-WATERMARK");

        Run altered = tierlog(null, "topics", "alter", topic, "-c", "retention.ms=7200000");
        assertThat(altered.code()).isZero();
        assertThat(altered.out()).contains("retention.ms = 7200000");

        Run exists = tierlog(null, "topics", "create", topic, "-p", "1");
        assertThat(exists.code()).isEqualTo(TierlogCli.FAILED);
        assertThat(exists.err()).startsWith("error: ").contains("(topic-exists, 409)").doesNotContain("Exception");

        assertThat(tierlog(null, "topics", "delete", topic).code()).isZero();
        Run gone = tierlog(null, "topics", "describe", topic);
        assertThat(gone.code()).isEqualTo(TierlogCli.NOT_FOUND);
        assertThat(gone.err()).contains("unknown-topic").doesNotContain("\tat ");
    }

    @Test
    void producedLinesAreConsumedBackWithKeysFromOffsetsTimesAndGroups() throws Exception {
        String topic = TestService.uniqueName("cli-records");
        assertThat(tierlog(null, "topics", "create", topic, "-p", "2").code()).isZero();
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 100; i++) {
            lines.append("user-").append(i % 5).append(':').append("event ").append(i).append('\n');
        }
        Run produced = tierlog(lines.toString(), "produce", topic, "--key-separator", ":", "-o", "json",
                "--compression", "zstd");
        assertThat(produced.code()).as(produced.err()).isZero();
        assertThat(produced.json().path("records").asLong()).isEqualTo(100);

        Run all = tierlog(null, "consume", topic, "--format", "kv", "--separator", "=");
        assertThat(all.code()).as(all.err()).isZero();
        List<String> got = all.out().lines().toList();
        assertThat(got).hasSize(100).contains("user-3=event 3", "user-4=event 99");
        assertThat(all.err()).contains("consumed 100 records");
        // No Kafka transaction wrote here: read_committed reads every record, and ends at the same end.
        Run committed = tierlog(null, "consume", topic, "--isolation", "read_committed");
        assertThat(committed.code()).as(committed.err()).isZero();
        assertThat(committed.out().lines()).hasSize(100);
        Run badIsolation = tierlog(null, "consume", topic, "--isolation", "serializable");
        assertThat(badIsolation.code()).isNotZero();
        assertThat(badIsolation.err()).contains("--isolation").contains("read_committed");

        Run json = tierlog(null, "consume", topic, "-p", "0", "--from", "2", "--max-records", "1", "-o", "json");
        JsonNode record = json.json();
        assertThat(record.path("offset").asLong()).isEqualTo(2);
        assertThat(record.path("partition").asInt()).isZero();

        long tomorrow = System.currentTimeMillis() + 86_400_000L; // later than every record before it
        Run jsonLines = tierlog("{\"key\": \"k\", \"value\": {\"a\": 1}, \"headers\": {\"h\": \"v\"}, \"timestamp\": "
                + tomorrow + "}\n", "produce", topic, "--format", "json", "--partition", "1");
        assertThat(jsonLines.code()).as(jsonLines.err()).isZero();
        Run byTime = tierlog(null, "consume", topic, "-p", "1", "--from-timestamp",
                java.time.Instant.ofEpochMilli(tomorrow - 1000).toString(),
                "--max-records", "1", "--format", "json");
        JsonNode late = JSON.readTree(byTime.out());
        assertThat(late.path("value").asText()).isEqualTo("{\"a\":1}");
        assertThat(late.path("key").asText()).isEqualTo("k");
        assertThat(late.path("headers").path("h").asText()).isEqualTo("v");
        assertThat(late.path("timestamp").asLong()).isEqualTo(tomorrow);

        String group = TestService.uniqueName("cli-group");
        Run first = tierlog(null, "consume", topic, "--group", group, "--max-records", "30");
        assertThat(first.out().lines()).hasSize(30);
        Run rest = tierlog(null, "consume", topic, "--group", group);
        assertThat(rest.out().lines()).as("the group resumes after the 30 it printed").hasSize(71);

        Run lag = tierlog(null, "groups", "lag", group, "-o", "json");
        assertThat(lag.json().path("totalLag").asLong()).isZero();
        assertThat(tierlog(null, "groups", "list").out()).contains(group);
        Run reset = tierlog(null, "groups", "reset", group, "--topic", topic, "--to", "earliest");
        assertThat(reset.code()).as(reset.err()).isZero();
        assertThat(tierlog(null, "groups", "lag", group, "-o", "json").json().path("totalLag").asLong()).isEqualTo(101);
        assertThat(tierlog(null, "groups", "delete", group).code()).isZero();
        assertThat(tierlog(null, "groups", "describe", group).code()).isEqualTo(TierlogCli.NOT_FOUND);
    }

    @Test
    void replayWritesARangeToAFileWithAProgressLine(@TempDir Path dir) throws Exception {
        String topic = TestService.uniqueName("cli-replay");
        tierlog(null, "topics", "create", topic, "-p", "1");
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 1000; i++) {
            lines.append("r").append(i).append('\n');
        }
        assertThat(tierlog(lines.toString(), "produce", topic).code()).isZero();
        Path file = dir.resolve("out.jsonl");
        Run replay = tierlog(null, "replay", topic, "--from", "100", "--to", "600", "--out", file.toString(),
                "--format", "value");
        assertThat(replay.code()).as(replay.err()).isZero();
        assertThat(Files.readAllLines(file)).hasSize(500).startsWith("r100").endsWith("r599");
        assertThat(replay.err()).contains("500 / 500 records").contains("MB/s").contains("ETA");
        assertThat(replay.out()).contains("replayed 500 records");
    }

    @Test
    void producesTheLinesOfFilesInTheOrderGiven(@TempDir Path dir) throws Exception {
        String topic = TestService.uniqueName("cli-files");
        assertThat(tierlog(null, "topics", "create", topic, "-p", "1").code()).isZero();
        Path a = dir.resolve("a.txt");
        Path b = dir.resolve("b.txt");
        Files.writeString(a, "a1\na2\n");
        Files.writeString(b, "b1\n");
        Run produced = tierlog(null, "produce", topic, a.toString(), b.toString());
        assertThat(produced.code()).as(produced.err()).isZero();
        assertThat(tierlog(null, "consume", topic, "--until-end").out().lines()).containsExactly("a1", "a2", "b1");
        Run missing = tierlog(null, "produce", topic, dir.resolve("none.txt").toString());
        assertThat(missing.code()).isNotZero();
        assertThat(missing.err()).startsWith("error: ").doesNotContain("\tat ");
    }

    @Test
    void tokensAreMintedListedAndRevokedAndAuthFailuresExitWithFour() throws Exception {
        String topic = TestService.uniqueName("cli-auth");
        tierlog(null, "topics", "create", topic, "-p", "1");
        Run minted = tierlog(null, "tokens", "create", "--name", "reader", "--scopes", "describe:topic:" + topic,
                "-o", "json");
        assertThat(minted.code()).as(minted.err()).isZero();
        String id = minted.json().path("id").asText();
        String secret = minted.json().path("token").asText();
        assertThat(tierlog(null, "tokens", "list").out()).contains(id);

        Run asReader = tierlog(null, "topics", "describe", topic, "--token", secret);
        assertThat(asReader.code()).as(asReader.err()).isZero();
        Run forbidden = tierlog(null, "topics", "delete", topic, "--token", secret);
        assertThat(forbidden.code()).isEqualTo(TierlogCli.AUTH);
        assertThat(forbidden.err()).contains("(forbidden, 403)");
        Run noToken = tierlogAs(Map.of("TIERLOG_URL", service.url()), null, "topics", "list");
        assertThat(noToken.code()).isEqualTo(TierlogCli.AUTH);
        assertThat(noToken.err()).contains("unauthorized");

        assertThat(tierlog(null, "tokens", "revoke", id).code()).isZero();
        assertThat(tierlog(null, "tokens", "revoke", id).code()).isEqualTo(TierlogCli.NOT_FOUND);
    }

    @Test
    void usageErrorsAndAnUnreachableServiceHaveTheirOwnExitCodes() throws Exception {
        Run unknown = tierlog(null, "topics", "frobnicate");
        assertThat(unknown.code()).isEqualTo(TierlogCli.USAGE);
        Run missing = tierlog(null, "topics", "create", "x");
        assertThat(missing.code()).isEqualTo(TierlogCli.USAGE);
        assertThat(missing.err()).contains("--partitions");
        Run both = tierlog(null, "consume", "t", "--follow", "--until-end");
        assertThat(both.code()).isEqualTo(TierlogCli.USAGE);
        Run badFrom = tierlog(null, "consume", "t", "--from", "1", "--from-timestamp", "2");
        assertThat(badFrom.code()).isEqualTo(TierlogCli.USAGE);

        int closedPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        Run down = tierlogAs(Map.of(), null, "topics", "list", "--url", "http://127.0.0.1:" + closedPort);
        assertThat(down.code()).isEqualTo(TierlogCli.UNAVAILABLE);
        assertThat(down.err()).startsWith("error: service unavailable");
        assertThat(tierlog(null, "--help").out()).contains("Exit codes:").contains("5   service unavailable");
    }
}
