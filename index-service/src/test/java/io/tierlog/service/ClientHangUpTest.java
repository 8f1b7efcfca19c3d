package io.tierlog.service;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static io.restassured.RestAssured.given;
import static io.tierlog.service.ApiTest.createTopic;
import static io.tierlog.service.ApiTest.unique;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that hangs up before its answer is written is not the service failing: nothing is logged at ERROR (each
 * would page a person, and any client could flood the log). The client here speaks HTTP/2 (the JDK client's h2c
 * upgrade) and resets every stream as soon as its answer's headers arrive, as a client giving up does; the server's
 * rapid-reset guard (CVE-2023-44487: Vert.x closes a connection after 200 resets in 30 s) closes its connection
 * while answers are being written, and the service goes on answering.
 */
@QuarkusTest
class ClientHangUpTest {
    @TestHTTPResource("/")
    URI base;

    @Test
    void streamsResetBeforeTheirAnswersLogNoErrorAndTheRapidResetGuardClosesTheConnection() throws Exception {
        String topic = unique("hangup");
        createTopic(topic, 64, null); // an answer of a few KB, written as Jackson fills its buffer
        List<LogRecord> errors = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.SEVERE.intValue()) {
                    errors.add(r);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger root = Logger.getLogger("");
        root.addHandler(capture);
        int closedByTheServer = 0;
        try {
            HttpClient http = HttpClient.newHttpClient();
            // A timeout: JDK 17's HTTP/2 client can wait for ever for a stream it sent as the server's GOAWAY
            // arrived (seen here once in several runs); it counts as a connection the guard closed.
            HttpRequest describe = HttpRequest.newBuilder(base.resolve("v1/topics/" + topic))
                    .timeout(Duration.ofSeconds(2)).build();
            for (int i = 0; i < 400; i++) {
                try {
                    http.send(describe, HttpResponse.BodyHandlers.ofInputStream()).body().close();
                } catch (IOException e) {
                    closedByTheServer++; // the guard's GOAWAY: the client opens a new connection for the next
                }
            }
            given().get("/v1/topics/" + topic).then().statusCode(200);
        } finally {
            root.removeHandler(capture);
        }
        assertThat(closedByTheServer).as("connections closed by the rapid-reset guard").isPositive();
        assertThat(errors).extracting(r -> r.getLoggerName() + ": " + r.getMessage()).isEmpty();
    }
}
