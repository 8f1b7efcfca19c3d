package io.tierlog.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.client.TestService;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The shaded jar run as a process through the launcher script, as a user runs it: output and exit codes. */
@Tag("slow")
class CliJarIT {
    record Run(int code, String out, String err) {
    }

    static Run run(TestService service, String stdin, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(System.getProperty("tierlog.cli.launcher", "bin/tierlog")));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("TIERLOG_URL", service.url());
        pb.environment().put("TIERLOG_TOKEN", TestService.ADMIN_TOKEN);
        pb.environment().put("TIERLOG_CLI_JAR", System.getProperty("tierlog.cli.jar", "target/tierlog-cli.jar"));
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Path out = Files.createTempFile("cli-out", ".txt");
        Path err = Files.createTempFile("cli-err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        try (var in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the CLI exits").isTrue();
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    @Test
    void theLauncherRunsTheShadedJar() throws Exception {
        TestService service = TestService.shared();
        String topic = TestService.uniqueName("jar");
        Run created = run(service, null, "topics", "create", topic, "--partitions", "1");
        assertThat(created.code()).as(created.err()).isZero();
        Run produced = run(service, "a\nb\nc\n", "produce", topic);
        assertThat(produced.code()).as(produced.err()).isZero();
        assertThat(produced.out()).contains("produced 3 records");
        Run consumed = run(service, null, "consume", topic, "--until-end");
        assertThat(consumed.out().lines()).containsExactly("a", "b", "c");
        Run missing = run(service, null, "topics", "describe", "no-such-topic");
        assertThat(missing.code()).isEqualTo(TierlogCli.NOT_FOUND);
        assertThat(missing.err()).contains("unknown-topic").doesNotContain("Exception");
        assertThat(run(service, null, "topics", "create").code()).isEqualTo(TierlogCli.USAGE);

        // For scripts: --output json on stdout, and the problem document as JSON on stderr.
        Run listed = run(service, null, "topics", "list", "--output", "json");
        assertThat(listed.code()).as(listed.err()).isZero();
        assertThat(new ObjectMapper().readTree(listed.out()).path("topics").findValuesAsText("name")).contains(topic);
        Run missingJson = run(service, null, "topics", "describe", "no-such-topic", "-o", "json");
        assertThat(missingJson.code()).isEqualTo(TierlogCli.NOT_FOUND);
        assertThat(new ObjectMapper().readTree(missingJson.err()).path("type").asText()).endsWith("unknown-topic");

        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        Run down = run(service, null, "topics", "list", "--url", "http://127.0.0.1:" + closedPort);
        assertThat(down.code()).isEqualTo(TierlogCli.UNAVAILABLE);
        assertThat(down.err()).startsWith("error: service unavailable").doesNotContain("\tat ");
    }
}
