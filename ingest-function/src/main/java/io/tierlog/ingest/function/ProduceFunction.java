package io.tierlog.ingest.function;

import io.tierlog.http.ProblemException;
import io.tierlog.http.ProblemType;
import io.tierlog.http.JsonProduce;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.tierlog.ingest.BatchProduceResult;
import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.ProduceAdmission;
import io.tierlog.ingest.ProduceResult;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import java.io.Closeable;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Adapts one API Gateway v2 event to {@link IngestService}: route and method, content type, body size and
 * base64 decoding, then {@code produce}, then the api.md answer. All produce logic (validation, partitioning,
 * idempotence, append) is the shared service's; this class only translates. Two body formats, as on the
 * index-service: JSON ({@link IngestService#produce}), and with Content-Type
 * {@value RequestBodies#RECORD_BATCHES} Kafka record batches for the partition named by {@code ?partition=P}
 * ({@link IngestService#produceBatches}), answered with the same JSON produce answer.
 *
 * <p>Errors: a {@link TierlogException} becomes its problem+json (same renderer as the index-service); anything
 * else becomes 500 {@code internal-error} whose detail names the request id and nothing of the failure, and is
 * logged at ERROR with its stack trace and the request id. Bad input changes nothing.
 *
 * <p>Snapshot safety: building this object touches no partition file (writers open on first append) and draws no
 * random seed (the partitioner seeds itself from {@link SecureRandom} on first use, after any restore).
 *
 * <p>Thread-safe.
 */
public final class ProduceFunction implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(ProduceFunction.class);

    private final IngestService ingest;
    private final RequestBodies bodies;
    private final FunctionAccess access;

    /** A function in the open {@code none} auth mode. */
    public ProduceFunction(IngestService ingest) {
        this(ingest, Map.of());
    }

    /** A function whose auth mode and keys come from {@code env} ({@link FunctionAccess}). */
    public ProduceFunction(IngestService ingest, Map<String, String> env) {
        this.ingest = ingest;
        this.bodies = new RequestBodies(ingest.config().maxRequestBytes());
        this.access = new FunctionAccess(env, Clock.systemUTC());
    }

    /**
     * Builds the function from {@code TIERLOG_DATA_DIR} (the EFS mount), {@code TIERLOG_FSYNC},
     * {@code TIERLOG_FSYNC_INTERVAL_MS} and {@code TIERLOG_MAX_REQUEST_BYTES}; see {@link IngestConfig}; and
     * {@code TIERLOG_HOT_MAX_USED_RATIO} (default 0.90, see {@link ProduceAdmission}).
     */
    public static ProduceFunction fromEnvironment(Map<String, String> env) {
        IngestConfig config = IngestConfig.fromEnvironment(env);
        // The seed supplier runs on the first unkeyed request, i.e. after a SnapStart restore, so restored copies
        // of one snapshot draw different seeds; SecureRandom is reseeded by the runtime on restore as well.
        // Backpressure as in the service, less the upload backlog, which only the index-service's tierer knows.
        double maxUsedRatio = Double.parseDouble(env.getOrDefault("TIERLOG_HOT_MAX_USED_RATIO",
                String.valueOf(ProduceAdmission.DEFAULT_MAX_USED_RATIO)));
        ProduceAdmission admission = new ProduceAdmission(config.dataDir(), maxUsedRatio, () -> false,
                ProduceAdmission.DEFAULT_RETRY_AFTER, Clock.systemUTC());
        IngestService ingest = new IngestService(config, Clock.systemUTC(), () -> new SecureRandom().nextInt(),
                io.tierlog.log.SyncMeters.NONE, admission);
        LOG.atInfo().addKeyValue("dataDir", config.dataDir().toString())
                .addKeyValue("fsync", config.fsync().name().toLowerCase(java.util.Locale.ROOT))
                .addKeyValue("maxRequestBytes", config.maxRequestBytes())
                .log("ingest function initialised");
        return new ProduceFunction(ingest, env);
    }

    /** Handles one event; never throws (every failure is an HTTP answer). */
    public APIGatewayV2HTTPResponse handle(APIGatewayV2HTTPEvent event, String requestId) {
        long started = System.nanoTime();
        MDC.put("requestId", requestId);
        if (event.getRequestContext() != null && event.getRequestContext().getRequestId() != null) {
            MDC.put("apiRequestId", event.getRequestContext().getRequestId());
        }
        try {
            // who, then where, then whether: 401 before 404, as the index-service answers
            io.tierlog.access.Principal caller = access.authenticate(event);
            String topic = ProduceRoute.topicOf(event);
            MDC.put("topic", topic);
            access.authorizeProduce(caller, topic);
            byte[] answer = switch (bodies.formatOf(event.getHeaders())) {
                case JSON -> produceJson(topic, event, started);
                case RECORD_BATCHES -> produceBatches(topic, event, started);
            };
            return FunctionResponses.json(200, answer);
        } catch (TierlogException e) {
            ProblemType type = ProblemType.of(e.type());
            if (e.type() == ErrorType.HOT_TIER_FULL) {
                // Backpressure, not a fault: the client retries after Retry-After.
                LOG.atWarn().addKeyValue("status", type.status()).addKeyValue("type", type.slug())
                        .addKeyValue("reason", e.extra().get("reason")).addKeyValue("detail", e.getMessage())
                        .log("produce refused");
            } else if (type.isServerError()) {
                LOG.atError().setCause(e).addKeyValue("status", type.status()).addKeyValue("type", type.slug())
                        .log("produce failed");
            } else {
                LOG.atInfo().addKeyValue("status", type.status()).addKeyValue("type", type.slug())
                        .addKeyValue("detail", e.getMessage()).addKeyValue("durationMs", millisSince(started))
                        .log("produce rejected");
            }
            return FunctionResponses.problem(e);
        } catch (ProblemException e) {
            LOG.atInfo().addKeyValue("status", e.type().status()).addKeyValue("type", e.type().slug())
                    .addKeyValue("detail", e.getMessage()).addKeyValue("durationMs", millisSince(started))
                    .log("produce rejected");
            return FunctionResponses.problem(e);
        } catch (RuntimeException e) {
            LOG.atError().setCause(e).addKeyValue("status", 500).log("unexpected failure while producing");
            return FunctionResponses.problem(new TierlogException(ErrorType.INTERNAL,
                    "the request failed unexpectedly; quote request id " + requestId + " when reporting it",
                    Map.of("requestId", requestId)));
        } finally {
            MDC.clear();
        }
    }

    private byte[] produceJson(String topic, APIGatewayV2HTTPEvent event, long started) {
        byte[] body = bodies.decode(event);
        ProduceResult result = JsonProduce.produce(ingest, topic, body);
        LOG.atDebug().addKeyValue("status", 200).addKeyValue("records", result.offsets().size())
                .addKeyValue("duplicate", result.duplicate()).addKeyValue("durationMs", millisSince(started))
                .log("produced");
        return JsonProduce.answer(result);
    }

    /** The partition is checked before the body is decoded, in the index-service's order. */
    private byte[] produceBatches(String topic, APIGatewayV2HTTPEvent event, long started) {
        int partition = ProduceRoute.partitionOf(event);
        MDC.put("partition", Integer.toString(partition));
        ByteBuffer body = bodies.decodeBinary(event);
        BatchProduceResult result = ingest.produceBatches(topic, partition, body);
        LOG.atDebug().addKeyValue("status", 200).addKeyValue("format", "record-batches")
                .addKeyValue("records", result.recordCount()).addKeyValue("baseOffset", result.baseOffset())
                .addKeyValue("duplicate", result.duplicate()).addKeyValue("durationMs", millisSince(started))
                .log("produced");
        return JsonProduce.answer(result);
    }

    private static long millisSince(long startedNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos);
    }

    /** Releases the open partition files (tests; Lambda never closes an environment's handler). */
    @Override
    public void close() {
        ingest.close();
    }
}
