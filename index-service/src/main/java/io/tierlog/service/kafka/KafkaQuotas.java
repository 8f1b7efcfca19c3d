package io.tierlog.service.kafka;

import io.tierlog.service.quota.QuotaOverrides;
import io.tierlog.service.quota.Quotas;
import io.tierlog.service.quota.RateQuota;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.ShareAcknowledgeResponseData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.ProduceRequest;

import java.util.function.LongSupplier;

/**
 * The service's byte-rate quotas ({@link Quotas}) on the Kafka listener, the way Kafka applies
 * {@code producer_byte_rate} and {@code consumer_byte_rate}: a caller is never cut short mid-request; the bytes a
 * request moved are charged to the caller's bucket (the same bucket its HTTP requests charge), and a caller in debt
 * is throttled: its answer carries the throttle time, which kafka-clients and librdkafka wait out before their next
 * request to this broker, and the connection reads nothing for that long ({@link KafkaSession#throttle}), so a client
 * that ignores it waits anyway. A fetch from a caller already in debt is answered at once with no records (Kafka's
 * throttled fetch answer), so no bytes go out over the quota. Every request served on a pool (these too) charges
 * the time it ran there to {@code request_percentage} ({@link #requested}). Stateless beyond the buckets.
 */
final class KafkaQuotas {
    private final Quotas quotas;
    private final RateQuota produce;
    private final RateQuota fetch;
    private final RateQuota mutations;
    private final RateQuota requests;

    KafkaQuotas(Quotas quotas) {
        this.quotas = quotas;
        this.produce = quotas.produce();
        this.fetch = quotas.fetch();
        this.mutations = quotas.mutations();
        this.requests = quotas.requests();
    }

    /**
     * One topic-mutating request's (CreateTopics, CreatePartitions, DeleteTopics) share of its caller's
     * {@code controller_mutation_rate}, as Kafka applies it (KIP-599): partitions created or deleted are counted
     * topic by topic, and a topic is admitted while the caller is not in debt, so one request may go over. A request
     * of a version that knows THROTTLING_QUOTA_EXCEEDED (strict) has each later topic refused with it, and the answer
     * carries the wait only if one was refused; an older one is served whole and throttled after. A throttled answer
     * mutes the connection for its throttle time. Validate-only requests are neither counted nor refused. One per
     * request (not thread-safe).
     */
    final class Mutations {
        private final KafkaSession session;
        private final String bucket;
        private final boolean strict;
        private long refusedMs;

        private Mutations(KafkaSession session, String bucket, boolean strict) {
            this.session = session;
            this.bucket = bucket;
            this.strict = strict;
        }

        /** How long the caller must wait before this topic's mutation; 0: go on (always 0 unless strict). */
        long refusedForMs() {
            long ms = strict ? mutations.debtMillis(bucket) : 0;
            refusedMs = Math.max(refusedMs, ms);
            return ms;
        }

        /** The refusal's message for a topic refused {@link #refusedForMs} long. */
        String refusal(long waitMs) {
            return QuotaOverrides.Kind.MUTATION.kafkaKey() + " of " + mutations.perSecond(bucket)
                    + " partitions per second exceeded; retry after " + waitMs + " ms";
        }

        /** Counts {@code partitions} created or deleted. */
        void mutated(int partitions) {
            mutations.record(bucket, partitions);
        }

        /** The answer's throttle time, for which the connection now mutes. */
        int throttleMs() {
            long ms = strict ? refusedMs : mutations.debtMillis(bucket);
            session.throttle(ms);
            return (int) Math.min(Integer.MAX_VALUE, ms);
        }
    }

    /** The mutation quota of one request; {@code strict} for the versions that know THROTTLING_QUOTA_EXCEEDED. */
    Mutations mutations(KafkaSession session, String clientId, boolean strict) {
        return new Mutations(session, quotas.mutationBucket(Quotas.key(session.principal(), session.address()),
                clientId == null ? "" : clientId), strict);
    }

    // A request without a client id is client id "", as in Kafka: the default client id's rate reaches it.
    private String produceKey(KafkaSession session, String clientId) {
        return quotas.produceBucket(Quotas.key(session.principal(), session.address()),
                clientId == null ? "" : clientId);
    }

    private String fetchKey(KafkaSession session, String clientId) {
        return quotas.fetchBucket(Quotas.key(session.principal(), session.address()), clientId == null ? "" : clientId);
    }

    /**
     * Charges {@code nanos} of the listener's time on one request to the caller's {@code request_percentage} (in
     * microseconds, at least one); the throttle it is now under, for which the session mutes (0 without a rate).
     */
    int requested(KafkaSession session, String clientId, long nanos) {
        String bucket = quotas.requestBucket(Quotas.key(session.principal(), session.address()),
                clientId == null ? "" : clientId);
        return charge(requests, bucket, session, () -> Math.max(1, nanos / 1_000));
    }

    /**
     * Raises {@code body}'s throttle time to {@code throttleMs} when it is lower (a rate that throttles less never
     * shortens another's): for the answers whose work {@code KafkaApis} times on a pool, which are message data, not
     * responses with a common setter.
     */
    static void raiseThrottle(ApiMessage body, int throttleMs) {
        if (throttleMs <= 0 || body == null) {
            return;
        }
        if (body instanceof ProduceResponseData d && d.throttleTimeMs() < throttleMs) {
            d.setThrottleTimeMs(throttleMs);
        } else if (body instanceof FetchResponseData d && d.throttleTimeMs() < throttleMs) {
            d.setThrottleTimeMs(throttleMs);
        } else if (body instanceof ShareFetchResponseData d && d.throttleTimeMs() < throttleMs) {
            d.setThrottleTimeMs(throttleMs);
        } else if (body instanceof ShareAcknowledgeResponseData d && d.throttleTimeMs() < throttleMs) {
            d.setThrottleTimeMs(throttleMs);
        } else if (body instanceof JoinGroupResponseData d && d.throttleTimeMs() < throttleMs) {
            d.setThrottleTimeMs(throttleMs);
        } else if (body instanceof SyncGroupResponseData d && d.throttleTimeMs() < throttleMs) {
            d.setThrottleTimeMs(throttleMs);
        }
    }

    /** Charges a produce's record bytes; its answer (none for acks=0) carries the throttle, and the session mutes. */
    KafkaApis.Reply produced(ProduceRequest request, KafkaApis.Reply reply, KafkaSession session, String clientId) {
        int throttleMs = charge(produce, produceKey(session, clientId), session,
                () -> KafkaInternals.recordBytes(request.data()));
        if (reply.body() instanceof ProduceResponseData data) {
            data.setThrottleTimeMs(throttleMs);
        }
        return reply;
    }

    /** How long the caller's fetches are throttled now; 0: serve the fetch. */
    long fetchThrottleMs(KafkaSession session, String clientId) {
        return fetch.debtMillis(fetchKey(session, clientId));
    }

    /**
     * Kafka's answer to a throttled fetch: no partitions, the throttle time; an incremental session's id is kept
     * (its partitions stay as they were), a full fetch is answered sessionless and the client starts afresh.
     */
    FetchResponseData throttledFetch(FetchRequest request, short version, long throttleMs, KafkaSession session) {
        session.throttle(throttleMs);
        int sessionId = version >= 7 && request.data().sessionEpoch() > 0 ? request.data().sessionId() : 0;
        return new FetchResponseData().setThrottleTimeMs((int) Math.min(Integer.MAX_VALUE, throttleMs))
                .setSessionId(sessionId);
    }

    /** Charges a fetch's answered record bytes; the answer carries any throttle, and the session mutes. */
    KafkaApis.Reply fetched(KafkaApis.Reply reply, KafkaSession session, String clientId) {
        if (!(reply.body() instanceof FetchResponseData data)) {
            return reply;
        }
        data.setThrottleTimeMs(charge(fetch, fetchKey(session, clientId), session,
                () -> KafkaInternals.recordBytes(data)));
        return reply;
    }

    /**
     * Charges a share fetch's record bytes to the fetch quota; the answer carries any throttle, and the session mutes.
     * Not answered empty up front as a fetch is: a share fetch carries acknowledgements, which must not be dropped.
     */
    KafkaApis.Reply shareFetched(KafkaApis.Reply reply, KafkaSession session, String clientId) {
        if (!(reply.body() instanceof ShareFetchResponseData data)) {
            return reply;
        }
        data.setThrottleTimeMs(charge(fetch, fetchKey(session, clientId), session,
                () -> KafkaInternals.recordBytes(data)));
        return reply;
    }

    /**
     * Charges {@code bytes} to the caller's bucket; the throttle it is now under, which the session will mute for.
     * A caller without a rate is not counted (nor its bytes summed).
     */
    private static int charge(RateQuota quota, String key, KafkaSession session, LongSupplier bytes) {
        if (quota.perSecond(key) <= 0) {
            return 0;
        }
        quota.record(key, bytes.getAsLong());
        long throttleMs = quota.debtMillis(key);
        session.throttle(throttleMs);
        return (int) Math.min(Integer.MAX_VALUE, throttleMs);
    }
}
