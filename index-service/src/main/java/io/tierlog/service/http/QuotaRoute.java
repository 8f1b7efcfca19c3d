package io.tierlog.service.http;

import io.micrometer.core.instrument.Counter;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.service.metrics.Meters;
import io.tierlog.service.quota.QuotaOverrides.Kind;
import io.tierlog.service.quota.RateQuota;
import io.tierlog.service.quota.Quotas;
import io.vertx.core.net.SocketAddress;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The per-principal byte-rate quotas {@code tierlog.quota.produce-bytes-per-second} (request bytes of
 * {@code POST .../records}) and {@code tierlog.quota.fetch-bytes-per-second} (response bytes of
 * {@code GET .../partitions/{p}/records}, JSON or record batches), each unlimited when unset and no rate is set for
 * the caller ({@link Quotas}); see
 * {@link RateQuota} for the semantics. A principal over its quota gets 429 {@code quota-exceeded} with
 * {@code Retry-After}; nothing of its request is parsed, appended or fetched. SSE streams are checked when they
 * open, but the bytes they send are not counted. Topic creation and deletion are checked against the caller's
 * {@code controller_mutation_rate} (partitions per second, set only by an administrator) the same way: the route
 * that created or deleted a topic leaves its partition count under {@value #MUTATED_PARTITIONS}, and it is counted
 * when the answer ends.
 *
 * <p>The principal is what the access filter put under {@value #PRINCIPAL_KEY} in the routing context
 * ({@link #principalOf}); {@code none} mode's shared anonymous caller, or none at all, counts by client IP address.
 * The buckets are {@link Quotas}', which the Kafka listener charges too. Runs after that filter (order -1000) and
 * before every other route of these paths.
 */
@Singleton
public class QuotaRoute {
    /** Where the authentication filter leaves the request's principal. */
    public static final String PRINCIPAL_KEY = "tierlog.principal";
    /** Where a topic route leaves the number of partitions it created or deleted (an Integer). */
    public static final String MUTATED_PARTITIONS = "tierlog.mutated-partitions";

    private final RateQuota produce;
    private final RateQuota fetch;
    private final RateQuota mutations;
    private final Counter produceRejected;
    private final Counter fetchRejected;
    private final Counter mutationRejected;

    public QuotaRoute(Quotas quotas, Meters meters) {
        this.produce = quotas.produce();
        this.fetch = quotas.fetch();
        this.mutations = quotas.mutations();
        this.produceRejected = meters.produceQuotaRejected();
        this.fetchRejected = meters.fetchQuotaRejected();
        this.mutationRejected = meters.mutationQuotaRejected();
    }

    void install(@Observes Router router) {
        // Always: an administrator may set a caller's rate at any time (Kafka's AlterClientQuotas).
        router.post("/v1/topics/:topic/records").order(-900).handler(this::produce);
        router.get("/v1/topics/:topic/partitions/:partition/records").order(-900).handler(this::fetch);
        router.get("/v1/topics/:topic/partitions/:partition/stream").order(-900).handler(this::stream);
        router.post("/v1/topics").order(-900).handler(this::mutation);
        router.delete("/v1/topics/:topic").order(-900).handler(this::mutation);
    }

    /** The quota key of a request ({@link Quotas#key}): its principal, else its client address. */
    static String principalOf(RoutingContext ctx) {
        SocketAddress remote = ctx.request().remoteAddress();
        return Quotas.key(ctx.get(PRINCIPAL_KEY), remote == null ? null : remote.hostAddress());
    }

    private void produce(RoutingContext ctx) {
        String principal = principalOf(ctx);
        if (produce.perSecond(principal) > 0) {
            if (refused(ctx, produce, principal, Kind.PRODUCE, produceRejected)) {
                return;
            }
            ctx.addEndHandler(done -> produce.record(principal, ctx.request().bytesRead()));
        }
        ctx.next();
    }

    private void fetch(RoutingContext ctx) {
        String principal = principalOf(ctx);
        if (fetch.perSecond(principal) > 0) {
            if (refused(ctx, fetch, principal, Kind.FETCH, fetchRejected)) {
                return;
            }
            ctx.addEndHandler(done -> fetch.record(principal, ctx.response().bytesWritten()));
        }
        ctx.next();
    }

    private void mutation(RoutingContext ctx) {
        String principal = principalOf(ctx);
        if (mutations.perSecond(principal) > 0) {
            if (refused(ctx, mutations, principal, Kind.MUTATION, mutationRejected)) {
                return;
            }
            ctx.addEndHandler(done -> {
                Integer partitions = ctx.get(MUTATED_PARTITIONS);
                if (partitions != null) {
                    mutations.record(principal, partitions);
                }
            });
        }
        ctx.next();
    }

    private void stream(RoutingContext ctx) {
        if (!refused(ctx, fetch, principalOf(ctx), Kind.FETCH, fetchRejected)) {
            ctx.next();
        }
    }

    /** Answers 429 if {@code principal} is in debt on {@code quota}, naming the quota and its rate in its unit. */
    private static boolean refused(RoutingContext ctx, RateQuota quota, String principal, Kind kind,
                                   Counter rejected) {
        Optional<Duration> wait = quota.check(principal);
        if (wait.isEmpty()) {
            return false;
        }
        rejected.increment();
        long seconds = wait.get().toSeconds();
        long rate = quota.perSecond(principal);
        // The body is read and dropped (never parsed or appended), so the connection stays usable.
        ProblemMapper.respondAfterBody(ctx, new TierlogException(ErrorType.QUOTA_EXCEEDED, kind.kafkaKey() + " of "
                + rate + " " + kind.unit() + " per second exceeded; retry after " + seconds + " s",
                Map.of("quota", kind.name().toLowerCase(Locale.ROOT), kind.unit() + "PerSecond", rate,
                        TierlogException.RETRY_AFTER_SECONDS, seconds)));
        return true;
    }
}
