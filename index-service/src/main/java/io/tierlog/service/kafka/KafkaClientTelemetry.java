package io.tierlog.service.kafka;

import io.tierlog.service.metrics.ClientTelemetryMeters;
import io.tierlog.service.telemetry.ClientMetricsSubscription;
import io.tierlog.service.telemetry.ClientMetricsSubscriptions;
import io.tierlog.service.telemetry.ClientTelemetry;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.TelemetryTooLargeException;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.GetTelemetrySubscriptionsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.PushTelemetryRequestData;
import org.apache.kafka.common.message.PushTelemetryResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.GetTelemetrySubscriptionsRequest;
import org.apache.kafka.common.requests.GetTelemetrySubscriptionsResponse;
import org.apache.kafka.common.requests.PushTelemetryRequest;
import org.apache.kafka.common.requests.PushTelemetryResponse;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * KIP-714 on the listener: GetTelemetrySubscriptions and PushTelemetry for every authenticated client
 * ({@link ClientTelemetry}), and the subscriptions as Kafka's CLIENT_METRICS config resources for the administrator
 * ({@code kafka-client-metrics}, {@code kafka-configs --entity-type client-metrics}): DescribeConfigs,
 * IncrementalAlterConfigs, AlterConfigs and ListConfigResources v0. A subscription exists while it sets a key; deleting
 * its last removes it, as in Kafka. Blocking (file writes on the shared volume, payload inflation): runs on a
 * worker. Thread-safe.
 */
@Singleton
public class KafkaClientTelemetry {
    /** A payload may inflate to this many times the largest push: OTLP compresses well, a bomb is refused. */
    private static final int MAX_INFLATION = 16;
    private static final Map<String, String> DOCS = Map.of(
            ClientMetricsSubscription.METRICS, "Metric name prefixes the matching clients push; * for all of them.",
            ClientMetricsSubscription.INTERVAL_MS, "How often the matching clients push, 100 ms to 1 hour.",
            ClientMetricsSubscription.MATCH, "selector=regex entries a client must all match: client_instance_id, "
                    + "client_id, client_software_name, client_software_version, client_source_address, "
                    + "client_source_port. None: every client.");

    private final ClientTelemetry telemetry;
    private final ClientMetricsSubscriptions subscriptions;
    private final ClientTelemetryMeters meters;

    public KafkaClientTelemetry(ClientTelemetry telemetry, ClientMetricsSubscriptions subscriptions) {
        this.telemetry = telemetry;
        this.subscriptions = subscriptions;
        this.meters = telemetry.meters();
    }

    GetTelemetrySubscriptionsResponse subscriptions(GetTelemetrySubscriptionsRequest request, KafkaSession session,
                                                    String clientId) {
        try {
            ClientTelemetry.Subscription s = telemetry.subscribe(request.data().clientInstanceId(),
                    client(session, clientId));
            return new GetTelemetrySubscriptionsResponse(new GetTelemetrySubscriptionsResponseData()
                    .setClientInstanceId(s.clientInstanceId()).setSubscriptionId(s.id())
                    .setAcceptedCompressionTypes(ClientTelemetry.COMPRESSION_TYPES)
                    .setPushIntervalMs(s.intervalMs()).setTelemetryMaxBytes(telemetry.maxBytes())
                    .setDeltaTemporality(true).setRequestedMetrics(s.metrics()));
        } catch (ApiException e) {
            return request.getErrorResponse(0, e);
        }
    }

    PushTelemetryResponse push(PushTelemetryRequest request, KafkaSession session, String clientId) {
        PushTelemetryRequestData data = request.data();
        ByteBuffer payload = data.metrics();
        int bytes = payload == null ? 0 : payload.remaining();
        Errors outcome;
        try {
            ClientTelemetry.Admitted push = telemetry.admit(data.clientInstanceId(), data.subscriptionId(),
                    data.terminating(), data.compressionType(), bytes, client(session, clientId));
            if (bytes > 0) {
                byte[] otlp;
                try {
                    otlp = KafkaInternals.decompressTelemetry(data.compressionType(), payload,
                            telemetry.maxBytes() * MAX_INFLATION);
                } catch (IOException unreadable) {
                    throw new InvalidRecordException("the pushed metrics do not inflate with their codec");
                }
                if (otlp == null) {
                    throw new TelemetryTooLargeException("the pushed metrics inflate to more than "
                            + (long) telemetry.maxBytes() * MAX_INFLATION + " bytes");
                }
                telemetry.export(push, otlp);
            }
            outcome = Errors.NONE;
        } catch (ApiException e) {
            outcome = Errors.forException(e);
            meters.push(outcome.name().toLowerCase());
            return request.getErrorResponse(0, e);
        }
        meters.push("none");
        return new PushTelemetryResponse(new PushTelemetryResponseData().setErrorCode(outcome.code()));
    }

    private static ClientTelemetry.Client client(KafkaSession session, String clientId) {
        return new ClientTelemetry.Client(clientId, session.softwareName(), session.softwareVersion(),
                session.address(), session.port());
    }

    /** The subscriptions' names, the CLIENT_METRICS config resources ({@link KafkaConfigResources}). */
    List<String> subscriptionNames() {
        List<String> out = new ArrayList<>();
        subscriptions.all().forEach(s -> out.add(s.name()));
        return out;
    }

    /** Every config of the subscription {@code asked} names (or those it asks for), set or default. */
    void describe(DescribeConfigsRequestData.DescribeConfigsResource asked,
                  DescribeConfigsResponseData.DescribeConfigsResult result, boolean documentation) {
        Map<String, String> set = subscriptions.get(asked.resourceName())
                .map(ClientMetricsSubscription::configs).orElse(Map.of());
        Map<String, String> defaults = Map.of(ClientMetricsSubscription.METRICS, "",
                ClientMetricsSubscription.INTERVAL_MS, String.valueOf(ClientMetricsSubscription.DEFAULT_INTERVAL_MS),
                ClientMetricsSubscription.MATCH, "");
        for (String key : ClientMetricsSubscription.KEYS) {
            if (asked.configurationKeys() != null && !asked.configurationKeys().contains(key)) {
                continue;
            }
            result.configs().add(new DescribeConfigsResponseData.DescribeConfigsResourceResult().setName(key)
                    .setValue(set.getOrDefault(key, defaults.get(key))).setReadOnly(false).setIsSensitive(false)
                    .setConfigSource((set.containsKey(key) ? DescribeConfigsResponse.ConfigSource.CLIENT_METRICS_CONFIG
                            : DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG).id())
                    .setConfigType((key.equals(ClientMetricsSubscription.INTERVAL_MS)
                            ? DescribeConfigsResponse.ConfigType.INT : DescribeConfigsResponse.ConfigType.LIST).id())
                    .setDocumentation(documentation ? DOCS.get(key) : null));
        }
    }

    /**
     * IncrementalAlterConfigs on one subscription: SET and DELETE any key, APPEND and SUBTRACT entries of the lists
     * ({@code metrics}, {@code match}); checked whole before it is stored (INVALID_CONFIG naming the key).
     */
    void alter(IncrementalAlterConfigsRequestData.AlterConfigsResource asked, boolean validateOnly) {
        Map<String, String> configs = new HashMap<>(subscriptions.get(asked.resourceName())
                .map(ClientMetricsSubscription::configs).orElse(Map.of()));
        for (IncrementalAlterConfigsRequestData.AlterableConfig c : asked.configs()) {
            AlterConfigOp.OpType op = AlterConfigOp.OpType.forId(c.configOperation());
            boolean list = c.name().equals(ClientMetricsSubscription.METRICS)
                    || c.name().equals(ClientMetricsSubscription.MATCH);
            switch (op == null ? AlterConfigOp.OpType.SET : op) {
                case SET -> configs.put(c.name(), c.value() == null ? "" : c.value());
                case DELETE -> configs.remove(c.name());
                case APPEND, SUBTRACT -> {
                    if (!list) {
                        throw Errors.INVALID_CONFIG.exception(op + " on " + c.name() + ": only metrics and match are "
                                + "lists; use SET or DELETE");
                    }
                    LinkedHashSet<String> entries =
                            new LinkedHashSet<>(ClientMetricsSubscription.list(configs.get(c.name())));
                    if (op == AlterConfigOp.OpType.APPEND) {
                        entries.addAll(ClientMetricsSubscription.list(c.value()));
                    } else {
                        entries.removeAll(ClientMetricsSubscription.list(c.value()));
                    }
                    configs.put(c.name(), String.join(",", entries));
                }
            }
        }
        store(asked.resourceName(), configs, validateOnly);
    }

    /** AlterConfigs (the whole set) on one subscription: the keys given replace every key it had. */
    void replace(AlterConfigsRequestData.AlterConfigsResource asked, boolean validateOnly) {
        Map<String, String> configs = new HashMap<>();
        asked.configs().forEach(c -> configs.put(c.name(), c.value() == null ? "" : c.value()));
        store(asked.resourceName(), configs, validateOnly);
    }

    private void store(String name, Map<String, String> configs, boolean validateOnly) {
        ClientMetricsSubscription s = ClientMetricsSubscription.of(name, configs);
        if (validateOnly) {
            return;
        }
        if (configs.isEmpty()) {
            subscriptions.remove(name);
        } else {
            subscriptions.put(s);
        }
    }
}
