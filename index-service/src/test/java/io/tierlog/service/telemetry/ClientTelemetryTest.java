package io.tierlog.service.telemetry;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.Gauge;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.MetricsData;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.metrics.v1.Sum;
import io.tierlog.access.Secrets;
import io.tierlog.service.metrics.Meters;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TelemetryTooLargeException;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;
import org.apache.kafka.common.errors.UnknownSubscriptionIdException;
import org.apache.kafka.common.errors.UnsupportedCompressionTypeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Client metrics as Kafka's broker serves them (KIP-714): subscriptions, throttling, the checks of a push in Kafka's
 * order, and the export of pushed OTLP points as meters, until the client falls silent.
 */
class ClientTelemetryTest {
    static final String SEND_RATE = "org.apache.kafka.producer.record.send.rate";
    static final String SENT = "org.apache.kafka.producer.record.send.total";

    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock(1_000_000);
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ClientMetricsSubscriptions subscriptions;
    ClientTelemetry telemetry;
    final ClientTelemetry.Client producer = new ClientTelemetry.Client("app-1", "apache-kafka-java", "4.4.0",
            "10.0.0.7", 50_000);

    ClientTelemetry telemetry(int maxSeries) {
        subscriptions = new ClientMetricsSubscriptions(dir, clock, new Secrets(new SecureRandom()));
        return new ClientTelemetry(subscriptions, new Meters(registry).clientTelemetry(maxSeries), clock, 1024);
    }

    void subscribe(String name, Map<String, String> configs) {
        subscriptions.put(ClientMetricsSubscription.of(name, configs));
    }

    /** A new client instance of {@link #producer} subscribed to {@code metrics} every second. */
    ClientTelemetry.Subscription subscribedEverySecond(String metrics) {
        subscribe("p", Map.of("metrics", metrics, "interval.ms", "1000"));
        return telemetry.subscribe(Uuid.ZERO_UUID, producer);
    }

    @Test
    void aClientGetsWhatEveryMatchingSubscriptionAsksAtTheShortestInterval() {
        telemetry = telemetry(100);
        ClientTelemetry.Subscription none = telemetry.subscribe(Uuid.ZERO_UUID, producer);
        assertThat(none.clientInstanceId()).as("a new instance id").isNotEqualTo(Uuid.ZERO_UUID);
        assertThat(none.metrics()).as("nothing subscribed: nothing to push").isEmpty();
        assertThat(none.intervalMs()).isEqualTo(300_000);

        subscribe("producers", Map.of("metrics", "org.apache.kafka.producer.", "interval.ms", "10000",
                "match", "client_software_name=apache-kafka-java"));
        subscribe("app", Map.of("metrics", "org.apache.kafka.consumer.", "interval.ms", "2000",
                "match", "client_id=app-.*,client_source_address=10\\..*"));
        subscribe("others", Map.of("metrics", "*", "match", "client_id=other"));
        ClientTelemetry.Subscription s = telemetry.subscribe(none.clientInstanceId(), producer);
        assertThat(s.metrics()).containsExactly("org.apache.kafka.consumer.", "org.apache.kafka.producer.");
        assertThat(s.intervalMs()).isEqualTo(2000);
        assertThat(s.id()).as("the subscription changed").isNotEqualTo(none.id());

        ClientTelemetry elsewhere = new ClientTelemetry(subscriptions, new Meters(new SimpleMeterRegistry())
                .clientTelemetry(10), clock, 1024);
        assertThat(elsewhere.subscribe(s.clientInstanceId(), producer).id()).as("another instance computes the same id")
                .isEqualTo(s.id());
        ClientTelemetry.Client other = new ClientTelemetry.Client("other", "librdkafka", "2.6", "10.0.0.8", 1);
        assertThat(telemetry.subscribe(Uuid.ZERO_UUID, other).metrics()).containsExactly("*");
    }

    @Test
    void askingOrPushingAgainWithinTheIntervalIsThrottledUnlessTheSubscriptionChanged() {
        telemetry = telemetry(100);
        ClientTelemetry.Subscription s = subscribedEverySecond("org.apache.kafka.producer.");
        Uuid id = s.clientInstanceId();
        assertThatThrownBy(() -> telemetry.subscribe(id, producer))
                .isInstanceOf(ThrottlingQuotaExceededException.class);

        telemetry.admit(id, s.id(), false, (byte) 0, 10, producer);
        assertThatThrownBy(() -> telemetry.admit(id, s.id(), false, (byte) 0, 10, producer))
                .as("a second push in the same interval").isInstanceOf(ThrottlingQuotaExceededException.class);
        clock.advanceMillis(1000);
        telemetry.admit(id, s.id(), false, (byte) 0, 10, producer);

        subscribe("p", Map.of("metrics", "org.apache.kafka.producer.", "interval.ms", "500"));
        clock.advanceMillis(1000);
        assertThatThrownBy(() -> telemetry.admit(id, s.id(), false, (byte) 0, 10, producer))
                .isInstanceOf(UnknownSubscriptionIdException.class);
        ClientTelemetry.Subscription changed = telemetry.subscribe(id, producer);
        assertThat(changed.intervalMs()).as("asked again at once: not throttled").isEqualTo(500);
        telemetry.admit(id, changed.id(), false, (byte) 0, 10, producer);
    }

    @Test
    void aPushIsCheckedInKafkasOrderAndNothingIsTakenAfterATerminatingOne() {
        telemetry = telemetry(100);
        ClientTelemetry.Subscription s = subscribedEverySecond("org.apache.kafka.producer.");
        Uuid id = s.clientInstanceId();
        assertThatThrownBy(() -> telemetry.admit(Uuid.ZERO_UUID, s.id(), false, (byte) 0, 10, producer))
                .isInstanceOf(InvalidRequestException.class);
        assertThatThrownBy(() -> telemetry.admit(id, s.id(), false, (byte) 9, 10, producer))
                .isInstanceOf(UnsupportedCompressionTypeException.class);
        assertThat(telemetry.subscribe(id, producer).id()).as("after a codec refusal, asked again at once")
                .isEqualTo(s.id());
        clock.advanceMillis(1000);
        assertThatThrownBy(() -> telemetry.admit(id, s.id(), false, (byte) 4, 1025, producer))
                .isInstanceOf(TelemetryTooLargeException.class);
        clock.advanceMillis(1000);
        ClientTelemetry.Admitted push = telemetry.admit(id, s.id(), false, (byte) 4, 1024, producer);
        assertThatThrownBy(() -> telemetry.export(push, new byte[]{1, 2, 3}))
                .isInstanceOf(InvalidRecordException.class);

        telemetry.admit(id, s.id(), true, (byte) 0, 0, producer);
        clock.advanceMillis(5000);
        assertThatThrownBy(() -> telemetry.admit(id, s.id(), false, (byte) 0, 0, producer))
                .as("after the terminating push").isInstanceOf(InvalidRequestException.class);
    }

    @Test
    void pushedPointsAreMetersTaggedWithTheClientUntilItFallsSilent() {
        telemetry = telemetry(100);
        ClientTelemetry.Subscription s = subscribedEverySecond("org.apache.kafka.producer.");
        Uuid id = s.clientInstanceId();

        telemetry.export(telemetry.admit(id, s.id(), false, (byte) 0, 1, producer), payload(42.5, 100));
        clock.advanceMillis(1000);
        telemetry.export(telemetry.admit(id, s.id(), false, (byte) 0, 1, producer), payload(40.0, 30));
        Meter rate = registry.find(SEND_RATE).tag("client_id", "app-1").tag("topic", "orders")
                .tag("client_instance_id", id.toString()).tag("client_software_name", "apache-kafka-java").meter();
        assertThat(rate).isNotNull();
        assertThat(registry.get(SEND_RATE).gauge().value()).as("a gauge's last value").isEqualTo(40.0);
        assertThat(registry.get(SENT).functionCounter().count()).as("a delta sum added up").isEqualTo(130.0);
        assertThat(registry.find("tierlog.probe").meter()).as("outside KIP-714's namespace: dropped").isNull();
        assertThat(registry.get("tierlog.client.telemetry.points.dropped").counter().count()).isEqualTo(2.0);

        clock.advanceMillis(59_000);
        telemetry.expire();
        assertThat(registry.find(SEND_RATE).meter()).as("heard from within a minute").isNotNull();
        clock.advanceMillis(1_000);
        telemetry.expire();
        assertThat(registry.find(SEND_RATE).meter()).as("silent for a minute (over 3 intervals)").isNull();
        assertThat(registry.find(SENT).meter()).isNull();
        assertThat(telemetry.instances()).isZero();
    }

    @Test
    void seriesBeyondTheLimitAreDroppedAndCounted() {
        telemetry = telemetry(1);
        ClientTelemetry.Subscription s = subscribedEverySecond("*");
        telemetry.export(telemetry.admit(s.clientInstanceId(), s.id(), false, (byte) 0, 1, producer),
                payload(1.0, 1));
        assertThat(registry.find(SEND_RATE).meters()).hasSize(1);
        assertThat(registry.find(SENT).meters()).as("the second series").isEmpty();
        assertThat(registry.get("tierlog.client.telemetry.points.dropped").counter().count()).isEqualTo(2.0);
        assertThat(registry.get("tierlog.client.telemetry.series").gauge().value()).isEqualTo(1.0);
    }

    /** What a Java producer pushes: a gauge with a topic attribute, a delta sum, and a name outside the namespace. */
    static byte[] payload(double rate, long sentSince) {
        KeyValue topic = KeyValue.newBuilder().setKey("topic").setValue(AnyValue.newBuilder().setStringValue("orders"))
                .build();
        Metric gauge = Metric.newBuilder().setName(SEND_RATE).setGauge(Gauge.newBuilder().addDataPoints(
                NumberDataPoint.newBuilder().setAsDouble(rate).addAttributes(topic))).build();
        Metric sum = Metric.newBuilder().setName(SENT).setSum(Sum.newBuilder().setIsMonotonic(true)
                .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA)
                .addDataPoints(NumberDataPoint.newBuilder().setAsInt(sentSince))).build();
        Metric foreign = Metric.newBuilder().setName("tierlog.probe").setGauge(Gauge.newBuilder()
                .addDataPoints(NumberDataPoint.newBuilder().setAsDouble(1))).build();
        return MetricsData.newBuilder().addResourceMetrics(ResourceMetrics.newBuilder().addScopeMetrics(
                ScopeMetrics.newBuilder().addMetrics(gauge).addMetrics(sum).addMetrics(foreign))).build().toByteArray();
    }
}
