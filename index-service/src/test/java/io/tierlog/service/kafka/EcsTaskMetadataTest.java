package io.tierlog.service.kafka;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link EcsTaskMetadata} over HTTP from a loopback server answering the two paths of the ECS task metadata
 * endpoint v4 with documents shaped as AWS documents them for Fargate (the container's, then the task's).
 */
class EcsTaskMetadataTest {
    static final String CONTAINER = """
            {"DockerId": "cd189a933e5849daa93386466019ab50-2495160603", "Name": "index-service",
             "Networks": [{"NetworkMode": "awsvpc", "IPv4Addresses": ["10.0.2.106"],
               "AttachmentIndex": 0, "MACAddress": "0a:de:f6:10:51:e5", "IPv4SubnetCIDRBlock": "10.0.2.0/24",
               "DomainNameServers": ["10.0.0.2"], "PrivateDNSName": "ip-10-0-2-106.eu-west-1.compute.internal",
               "SubnetGatewayIpv4Address": "10.0.2.1/24"}]}""";
    static final String TASK = """
            {"Cluster": "arn:aws:ecs:eu-west-1:111122223333:cluster/tierlog", "TaskARN": "arn:aws:ecs:eu-west-1:111122223333:task/tierlog/cd189a93",
             "Family": "tierlog", "Revision": "3", "DesiredStatus": "RUNNING", "KnownStatus": "RUNNING",
             "AvailabilityZone": "eu-west-1b", "LaunchType": "FARGATE", "Containers": []}""";

    private final Map<String, String> documents = new ConcurrentHashMap<>();
    private HttpServer server;

    private String serve() throws Exception {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v4/abc", exchange -> {
            String body = documents.get(exchange.getRequestURI().getPath());
            byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(body == null ? 404 : 200, bytes.length == 0 ? -1 : bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v4/abc";
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void theTasksPrivateDnsNameAndZone() throws Exception {
        documents.put("/v4/abc", CONTAINER);
        documents.put("/v4/abc/task", TASK);
        EcsTaskMetadata ecs = EcsTaskMetadata.read(serve());
        assertThat(ecs.host()).contains("ip-10-0-2-106.eu-west-1.compute.internal");
        assertThat(ecs.zone()).contains("eu-west-1b");
    }

    @Test
    void itsAddressWhenTheNetworkHasNoDnsName() throws Exception {
        documents.put("/v4/abc", CONTAINER.replace("\"PrivateDNSName\": \"ip-10-0-2-106.eu-west-1.compute.internal\",", ""));
        documents.put("/v4/abc/task", TASK);
        assertThat(EcsTaskMetadata.read(serve()).host()).contains("10.0.2.106");
    }

    @Test
    void nothingWhenTheEndpointIsUnsetFailsOrAnswersNonsense() throws Exception {
        assertThat(EcsTaskMetadata.read(null)).isEqualTo(EcsTaskMetadata.NONE);
        assertThat(EcsTaskMetadata.read(" ")).isEqualTo(EcsTaskMetadata.NONE);
        String endpoint = serve();
        assertThat(EcsTaskMetadata.read(endpoint)).as("404").isEqualTo(EcsTaskMetadata.NONE);
        documents.put("/v4/abc", "not json");
        documents.put("/v4/abc/task", TASK);
        assertThat(EcsTaskMetadata.read(endpoint)).isEqualTo(EcsTaskMetadata.NONE);
    }
}
