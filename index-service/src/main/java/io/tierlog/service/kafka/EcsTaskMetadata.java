package io.tierlog.service.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;

/**
 * What an instance on Amazon ECS learns about itself from the task metadata endpoint (version 4, which ECS names in
 * {@code ECS_CONTAINER_METADATA_URI_V4} on Fargate platform 1.4.0 and later): its address in the VPC, which each
 * instance advertises as its broker's host, and its availability zone, its broker's rack. Every Fargate task is a
 * broker of its own with an address only known at start, so no deploy-time setting could name them.
 *
 * @param host the task's private DNS name, or its first IPv4 address when it has none
 * @param zone the task's availability zone
 */
record EcsTaskMetadata(Optional<String> host, Optional<String> zone) {
    private static final Logger LOG = Logger.getLogger(EcsTaskMetadata.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    static final String ENDPOINT_VARIABLE = "ECS_CONTAINER_METADATA_URI_V4";
    static final EcsTaskMetadata NONE = new EcsTaskMetadata(Optional.empty(), Optional.empty());

    /** Read from {@code endpoint} (the variable's value); {@link #NONE} when unset or unreachable. */
    static EcsTaskMetadata read(String endpoint) {
        if (endpoint == null || endpoint.isBlank()) {
            return NONE;
        }
        HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
        try {
            JsonNode container = get(http, URI.create(endpoint));
            JsonNode task = get(http, URI.create(endpoint + "/task"));
            return new EcsTaskMetadata(hostOf(container), text(task.path("AvailabilityZone")));
        } catch (IOException | RuntimeException e) {
            LOG.warnf("reading the ECS task metadata endpoint failed (%s): the Kafka listener advertises its "
                    + "configured or local host and no rack", e.toString());
            return NONE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return NONE;
        }
    }

    private static JsonNode get(HttpClient http, URI uri) throws IOException, InterruptedException {
        HttpResponse<byte[]> response = http.send(HttpRequest.newBuilder(uri).timeout(TIMEOUT).GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
        if (response.statusCode() != 200) {
            throw new IOException("status " + response.statusCode() + " from " + uri.getPath());
        }
        return JSON.readTree(response.body());
    }

    /** The awsvpc network's private DNS name, else its first IPv4 address. */
    private static Optional<String> hostOf(JsonNode container) {
        for (JsonNode network : container.path("Networks")) {
            Optional<String> name = text(network.path("PrivateDNSName"));
            if (name.isPresent()) {
                return name;
            }
            Optional<String> address = text(network.path("IPv4Addresses").path(0));
            if (address.isPresent()) {
                return address;
            }
        }
        return Optional.empty();
    }

    private static Optional<String> text(JsonNode node) {
        return node.isTextual() && !node.asText().isBlank() ? Optional.of(node.asText()) : Optional.empty();
    }
}
