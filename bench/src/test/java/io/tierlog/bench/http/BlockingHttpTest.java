package io.tierlog.bench.http;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/** Against the JDK's HTTP server on 127.0.0.1: status, headers, bodies, and keep-alive reuse. */
class BlockingHttpTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private final List<Integer> clientPorts = new CopyOnWriteArrayList<>();
    private HttpServer server;
    private URI base;

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/ok", x -> {
            clientPorts.add(x.getRemoteAddress().getPort());
            byte[] body = ("accept=" + x.getRequestHeaders().getFirst("Accept")).getBytes(StandardCharsets.UTF_8);
            x.getResponseHeaders().add("Tierlog-Next-Offset", "42");
            x.sendResponseHeaders(200, 0); // chunked
            try (OutputStream out = x.getResponseBody()) {
                out.write(body);
            }
        });
        server.createContext("/sized", x -> {
            byte[] body = sizedBody();
            x.sendResponseHeaders(200, body.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(body);
            }
        });
        server.createContext("/auth", x -> {
            byte[] body = (x.getRequestHeaders().getFirst("Content-Type") + "|"
                    + x.getRequestHeaders().getFirst("Authorization") + "|" + x.getRequestHeaders().getFirst("Accept"))
                    .getBytes(StandardCharsets.UTF_8);
            x.getRequestBody().readAllBytes();
            x.sendResponseHeaders(200, body.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(body);
            }
        });
        server.createContext("/missing", x -> {
            byte[] body = "{\"type\":\"not-found\"}".getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(404, body.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(body);
            }
        });
        server.createContext("/echo", x -> {
            clientPorts.add(x.getRemoteAddress().getPort());
            byte[] in = x.getRequestBody().readAllBytes();
            String answer = x.getRequestHeaders().getFirst("Content-Type") + ":" + new String(in, StandardCharsets.UTF_8);
            byte[] body = answer.getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, body.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        base = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void getGivesStatusHeadersAndBodyAndReusesTheConnection() throws Exception {
        for (int i = 0; i < 3; i++) {
            try (BlockingHttp.Response r = BlockingHttp.get(base.resolve("/ok"), TIMEOUT, TIMEOUT, "Accept", "x/y")) {
                assertThat(r.status()).isEqualTo(200);
                assertThat(r.header("Tierlog-Next-Offset")).isEqualTo("42");
                // Read only part of it: close() must drain the rest so the connection is reused.
                assertThat(new String(r.body().readNBytes(6), StandardCharsets.UTF_8)).isEqualTo("accept");
            }
        }
        assertThat(clientPorts).hasSize(3);
        assertThat(clientPorts.stream().distinct()).hasSize(1);
    }

    @Test
    void bytesReadsASizedBodyWholeAndAChunkedOneToItsEnd() throws Exception {
        try (BlockingHttp.Response r = BlockingHttp.get(base.resolve("/sized"), TIMEOUT, TIMEOUT)) {
            assertThat(r.bytes()).isEqualTo(sizedBody());
        }
        try (BlockingHttp.Response r = BlockingHttp.get(base.resolve("/ok"), TIMEOUT, TIMEOUT, "Accept", "x/y")) {
            assertThat(new String(r.bytes(), StandardCharsets.UTF_8)).isEqualTo("accept=x/y");
        }
    }

    /** 3 MiB and a bit, so that it arrives in many socket reads; every byte differs from its neighbours. */
    private static byte[] sizedBody() {
        byte[] body = new byte[3 * 1024 * 1024 + 17];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) (i * 31 + (i >>> 8));
        }
        return body;
    }

    @Test
    void disconnectDropsTheConnection() throws Exception {
        BlockingHttp.get(base.resolve("/ok"), TIMEOUT, TIMEOUT).disconnect();
        try (BlockingHttp.Response r = BlockingHttp.get(base.resolve("/ok"), TIMEOUT, TIMEOUT)) {
            assertThat(r.text(100)).isEqualTo("accept=*/*");
        }
        assertThat(clientPorts).hasSize(2);
        assertThat(clientPorts.get(0)).isNotEqualTo(clientPorts.get(1));
    }

    @Test
    void errorStatusGivesTheErrorBody() throws Exception {
        try (BlockingHttp.Response r = BlockingHttp.get(base.resolve("/missing"), TIMEOUT, TIMEOUT)) {
            assertThat(r.status()).isEqualTo(404);
            assertThat(r.text(100)).isEqualTo("{\"type\":\"not-found\"}");
        }
    }

    @Test
    void postSendsTheSliceWithItsContentTypeOverOneConnection() throws Exception {
        byte[] bytes = "xxhelloyy".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 2; i++) {
            BlockingHttp.Posted p = BlockingHttp.post(base.resolve("/echo"), "a/b", bytes, 2, 5, TIMEOUT, TIMEOUT);
            assertThat(p.status()).isEqualTo(200);
            assertThat(p.bodyText()).isEqualTo("a/b:hello");
        }
        assertThat(clientPorts.stream().distinct()).hasSize(1);
    }

    @Test
    void bearerTokenGoesOnPostsAndGetsAndNoTokenSendsNoAuthorization() throws Exception {
        byte[] bytes = "x".getBytes(StandardCharsets.UTF_8);
        BlockingHttp.Posted p = BlockingHttp.post(base.resolve("/auth"), "a/b", bytes, 0, 1, TIMEOUT, TIMEOUT,
                BlockingHttp.bearer("tierlog_abc"));
        assertThat(p.bodyText()).isEqualTo("a/b|Bearer tierlog_abc|*/*");
        try (BlockingHttp.Response r = BlockingHttp.get(base.resolve("/auth"), TIMEOUT, TIMEOUT,
                BlockingHttp.headers(BlockingHttp.bearer("t2"), "Accept", "x/y"))) {
            assertThat(r.text(100)).isEqualTo("null|Bearer t2|x/y");
        }
        assertThat(BlockingHttp.post(base.resolve("/auth"), "a/b", bytes, 0, 1, TIMEOUT, TIMEOUT,
                BlockingHttp.bearer(null)).bodyText()).isEqualTo("a/b|null|*/*");
    }
}
