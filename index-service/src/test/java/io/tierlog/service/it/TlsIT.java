package io.tierlog.service.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * HTTPS with a configured certificate (docs/security.md, "TLS"): a self-signed certificate for 127.0.0.1 made here
 * with the JDK's keytool, the packaged service in {@code token} mode serving it on {@code quarkus.http.ssl-port}; a
 * client that trusts it creates a topic with a bearer token over TLS, one that does not is refused in the handshake.
 */
class TlsIT {
    static final String PASSWORD = "changeit-" + System.nanoTime();
    static final String TOKEN = "tierlog_tls-bootstrap";

    @Test
    @Timeout(240)
    void theServiceAnswersOverHttpsWithItsConfiguredCertificate() throws Exception {
        Path work = Path.of("target", "it", "tls").toAbsolutePath();
        PackagedService.deleteTree(work);
        Files.createDirectories(work);
        Path keystore = work.resolve("server.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "tierlog", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1", "-storetype", "PKCS12",
                "-keystore", keystore.toString(), "-storepass", PASSWORD).inheritIO().start();
        assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(keytool.exitValue()).isZero();
        Files.writeString(work.resolve("bootstrap"), TOKEN);
        int sslPort = PackagedService.freePort();
        PackagedService app = PackagedService.start(work, work.resolve("hot"), "-Dtierlog.auth.mode=token",
                "-Dtierlog.auth.bootstrap-token-file=" + work.resolve("bootstrap"),
                "-Dquarkus.http.ssl-port=" + sslPort,
                "-Dquarkus.http.ssl.certificate.key-store-file=" + keystore,
                "-Dquarkus.http.ssl.certificate.key-store-password=" + PASSWORD);
        try {
            // Ready means every listener is bound: asked often, the first "ready" must find the HTTPS port (bound
            // after the plain one) accepting.
            app.awaitReady(Duration.ofSeconds(180), Duration.ofMillis(5));
            try (Socket probe = new Socket()) {
                probe.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), sslPort), 5_000);
            }
            KeyStore trust = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(keystore)) {
                trust.load(in, PASSWORD.toCharArray());
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext tls = SSLContext.getInstance("TLS");
            tls.init(null, tmf.getTrustManagers(), null);
            HttpClient trusting = HttpClient.newBuilder().sslContext(tls).connectTimeout(Duration.ofSeconds(5)).build();
            URI base = URI.create("https://127.0.0.1:" + sslPort);

            HttpResponse<String> created = trusting.send(HttpRequest.newBuilder(base.resolve("/v1/topics"))
                    .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"secure\",\"partitions\":1}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            assertThat(created.sslSession()).isPresent();
            HttpResponse<String> anonymous = trusting.send(HttpRequest.newBuilder(base.resolve("/v1/topics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(anonymous.statusCode()).isEqualTo(401);

            HttpClient untrusting = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            assertThatThrownBy(() -> untrusting.send(HttpRequest.newBuilder(base.resolve("/q/health/ready")).build(),
                    HttpResponse.BodyHandlers.ofString())).isInstanceOf(SSLHandshakeException.class);
            assertThat(List.of(Files.readString(app.log()).split("\n"))).noneMatch(l -> l.contains(TOKEN));
        } finally {
            app.process().destroy();
            if (!app.process().waitFor(30, TimeUnit.SECONDS)) {
                app.process().destroyForcibly();
            }
        }
    }
}
