package io.tierlog.ingest.function;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.TmpfsMount;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The function built from its environment ({@code TIERLOG_HOT_MAX_USED_RATIO}) on a real 4 MiB tmpfs (skipped where
 * this machine cannot mount one): past the ratio a produce is answered 503 {@code hot-tier-full} with
 * {@code Retry-After} and appends nothing; once space is freed, a retry after {@code Retry-After} is appended.
 */
class ProduceFunctionHotTierFullTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private TmpfsMount mount;
    private ProduceFunction function;
    /** Produces answered 200 while waiting for a 503: the volume sample they saw was taken before the fill. */
    private int appendedBeforeTheSample;

    @BeforeEach
    void mountSmallVolume() {
        mount = TmpfsMount.tryMount(Path.of("target", "tmpfs-" + UUID.randomUUID()).toAbsolutePath(), 4L << 20)
                .orElse(null);
        assumeTrue(mount != null, "cannot mount a tmpfs here (needs Linux and root)");
    }

    @AfterEach
    void unmount() throws IOException {
        if (function != null) {
            function.close();
        }
        if (mount != null) {
            mount.close();
            Files.deleteIfExists(mount.dir());
        }
    }

    @Test
    void pastTheUsedRatioProduceIs503WithRetryAfterAndRecoversOnceSpaceIsFreed() throws Exception {
        Path hot = mount.dir().resolve("hot");
        try (IngestService setup = new IngestService(new IngestConfig(hot, FsyncPolicy.ALWAYS, Duration.ofSeconds(1),
                1 << 20), Clock.systemUTC(), 0)) {
            setup.topics().create("orders", 1, TopicConfig.DEFAULTS);
        }
        function = ProduceFunction.fromEnvironment(Map.of("TIERLOG_DATA_DIR", hot.toString(),
                "TIERLOG_HOT_MAX_USED_RATIO", "0.5"));
        assertThat(function.handle(produce(), "req-0").getStatusCode()).isEqualTo(200);

        Path filler = mount.dir().resolve("filler");
        try (OutputStream out = Files.newOutputStream(filler)) {
            out.write(new byte[3 << 20]);
        }
        APIGatewayV2HTTPResponse refused = awaitStatus(503);
        assertThat(refused.getHeaders()).containsEntry("Retry-After", "1")
                .containsEntry("Content-Type", "application/problem+json");
        JsonNode problem = JSON.readTree(refused.getBody());
        assertThat(problem.get("type").asText()).isEqualTo("hot-tier-full");
        assertThat(problem.get("status").asInt()).isEqualTo(503);
        assertThat(problem.get("reason").asText()).isEqualTo("used-ratio");
        assertThat(refused.getBody()).doesNotContain(hot.toString());

        Files.delete(filler);
        APIGatewayV2HTTPResponse after = awaitStatus(200);
        assertThat(JSON.readTree(after.getBody()).get("offsets").get(0).get("offset").asLong())
                .as("nothing of the refused requests was appended").isEqualTo(1 + appendedBeforeTheSample);
    }

    /**
     * Produces until the answer has {@code status}; the volume is sampled once a second, so the answer changes
     * within about a second, and a produce in that second may still be appended (counted, so that the final
     * offset check still proves that no refused request was). Waits as {@code Retry-After} says between refusals.
     */
    private APIGatewayV2HTTPResponse awaitStatus(int status) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            APIGatewayV2HTTPResponse r = function.handle(produce(), "req");
            if (r.getStatusCode() == status || System.nanoTime() > deadline) {
                assertThat(r.getStatusCode()).as(r.getBody()).isEqualTo(status);
                return r;
            }
            if (r.getStatusCode() == 200) {
                appendedBeforeTheSample++;
                Thread.sleep(100);
                continue;
            }
            Thread.sleep(1000L * Long.parseLong(r.getHeaders().get("Retry-After")));
        }
    }

    private static APIGatewayV2HTTPEvent produce() {
        String path = "/v1/topics/orders/records";
        APIGatewayV2HTTPEvent e = APIGatewayV2HTTPEvent.builder()
                .withHeaders(new HashMap<>(Map.of("content-type", "application/json")))
                .withBody("{\"records\":[{\"partition\":0,\"value\":{\"n\":1}}]}").withIsBase64Encoded(false).build();
        e.setRawPath(path);
        e.setRequestContext(APIGatewayV2HTTPEvent.RequestContext.builder().withStage("$default").withRequestId("api-1")
                .withHttp(APIGatewayV2HTTPEvent.RequestContext.Http.builder().withMethod("POST").withPath(path).build())
                .build());
        return e;
    }
}
