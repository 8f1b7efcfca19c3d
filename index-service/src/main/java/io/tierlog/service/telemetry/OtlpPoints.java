package io.tierlog.service.telemetry;

import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.MetricsData;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.tierlog.service.metrics.ClientTelemetryMeters.Point;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The data points of a pushed OTLP {@code MetricsData} (KIP-714's payload, decompressed): gauges and sums, the
 * kinds Kafka clients push. Other kinds (histograms, summaries) are skipped. Stateless.
 */
final class OtlpPoints {
    private OtlpPoints() {
    }

    /** @throws InvalidProtocolBufferException when {@code otlp} is not a MetricsData message */
    static List<Point> of(byte[] otlp) throws InvalidProtocolBufferException {
        MetricsData data = MetricsData.parseFrom(otlp);
        List<Point> out = new ArrayList<>();
        for (ResourceMetrics resource : data.getResourceMetricsList()) {
            for (ScopeMetrics scope : resource.getScopeMetricsList()) {
                for (Metric m : scope.getMetricsList()) {
                    switch (m.getDataCase()) {
                        case GAUGE -> m.getGauge().getDataPointsList()
                                .forEach(p -> out.add(point(m.getName(), false, false, p)));
                        case SUM -> {
                            boolean delta = m.getSum().getAggregationTemporality()
                                    == AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA;
                            m.getSum().getDataPointsList().forEach(p -> out.add(point(m.getName(), true, delta, p)));
                        }
                        default -> {
                            // histograms and summaries: Kafka clients push none
                        }
                    }
                }
            }
        }
        return out;
    }

    private static Point point(String name, boolean sum, boolean delta, NumberDataPoint p) {
        double value = p.getValueCase() == NumberDataPoint.ValueCase.AS_INT ? p.getAsInt() : p.getAsDouble();
        Map<String, String> attributes = new HashMap<>();
        for (KeyValue kv : p.getAttributesList()) {
            attributes.put(kv.getKey(), text(kv.getValue()));
        }
        return new Point(name, sum, delta, attributes, value);
    }

    private static String text(AnyValue v) {
        return switch (v.getValueCase()) {
            case STRING_VALUE -> v.getStringValue();
            case INT_VALUE -> Long.toString(v.getIntValue());
            case DOUBLE_VALUE -> Double.toString(v.getDoubleValue());
            case BOOL_VALUE -> Boolean.toString(v.getBoolValue());
            default -> "";
        };
    }
}
