package io.tierlog.service.kafka;

import io.tierlog.access.Principal;
import io.tierlog.service.quota.QuotaOverrides;
import io.tierlog.service.quota.QuotaOverrides.Kind;
import io.tierlog.service.quota.QuotaOverrides.Rate;
import io.tierlog.service.quota.Quotas;
import io.tierlog.service.security.AccessControl;
import jakarta.inject.Singleton;
import org.apache.kafka.common.message.DescribeClientQuotasResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.AlterClientQuotasResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.apache.kafka.common.requests.DescribeClientQuotasResponse;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Kafka's client-quota APIs (DescribeClientQuotas, AlterClientQuotas: {@code kafka-configs --entity-type users})
 * over the rates administrators set per principal ({@link QuotaOverrides}): a {@code user} entity is a Tierlog
 * principal ({@code token:<id>}, {@code jwt:<sub>}, {@code cert:<subject>}, {@code bootstrap}), the default user is
 * every caller without its own rate, and the keys are {@code producer_byte_rate} and {@code consumer_byte_rate},
 * whole bytes per second. Client-id and ip entities and other keys are refused with INVALID_REQUEST and the reason;
 * an entity's changes are all checked before any is written. Only {@code admin:cluster} reaches these APIs
 * ({@link KafkaAccess}). Blocking (file writes on the shared volume): runs on a worker. Thread-safe.
 */
@Singleton
public class KafkaClientQuotas {
    private final QuotaOverrides overrides;
    private final AccessControl access;

    public KafkaClientQuotas(Quotas quotas, AccessControl access) {
        this.overrides = quotas.overrides();
        this.access = access;
    }

    /** The rates of every user entity the filter matches. */
    DescribeClientQuotasResponse describe(DescribeClientQuotasRequest request) {
        ClientQuotaFilter filter = request.filter();
        Set<String> types = new HashSet<>();
        for (ClientQuotaFilterComponent c : filter.components()) {
            if (!ClientQuotaEntity.isValidEntityType(c.entityType()) || !types.add(c.entityType())) {
                return new DescribeClientQuotasResponse(new DescribeClientQuotasResponseData()
                        .setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("entity type "
                                + c.entityType() + " is unknown or named twice in the filter"));
            }
        }
        Map<ClientQuotaEntity, Map<String, Double>> out = new LinkedHashMap<>();
        for (Rate r : overrides.list()) {
            String user = QuotaOverrides.DEFAULT.equals(r.entity()) ? null : r.entity();
            if (matches(filter, user)) {
                out.computeIfAbsent(entity(user), e -> new HashMap<>())
                        .put(r.kind().kafkaKey(), (double) r.bytesPerSecond());
            }
        }
        return DescribeClientQuotasResponse.fromQuotaEntities(out, 0);
    }

    /** Kafka's filter rules for an entity of one type, {@code user} ({@code null}: the default user). */
    private static boolean matches(ClientQuotaFilter filter, String user) {
        boolean namesUser = false;
        for (ClientQuotaFilterComponent c : filter.components()) {
            if (!ClientQuotaEntity.USER.equals(c.entityType())) {
                return false; // the entity has no component of that type
            }
            namesUser = true;
            boolean match = c.match() == null ? user != null // any specified name
                    : c.match().isEmpty() ? user == null // the default
                    : c.match().get().equals(user);
            if (!match) {
                return false;
            }
        }
        return namesUser || !filter.strict();
    }

    private static ClientQuotaEntity entity(String user) {
        return new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, user));
    }

    /** Each entity's changes, all checked before any is written; durable before the answer unless validate-only. */
    AlterClientQuotasResponse alter(AlterClientQuotasRequest request, Principal caller) {
        Map<ClientQuotaEntity, ApiError> out = new LinkedHashMap<>();
        for (ClientQuotaAlteration entry : request.entries()) {
            try {
                String entity = entityName(entry.entity());
                List<Runnable> changes = new ArrayList<>();
                for (ClientQuotaAlteration.Op op : entry.ops()) {
                    changes.add(change(entity, op, caller));
                }
                if (!request.validateOnly()) {
                    changes.forEach(Runnable::run);
                }
                out.put(entry.entity(), ApiError.NONE);
            } catch (IllegalArgumentException e) {
                out.put(entry.entity(), new ApiError(Errors.INVALID_REQUEST, e.getMessage()));
            }
        }
        return AlterClientQuotasResponse.fromQuotaEntities(out, 0);
    }

    /** The entity's name in {@link QuotaOverrides}; throws naming why when it is not a user Tierlog knows. */
    private static String entityName(ClientQuotaEntity entity) {
        Map<String, String> entries = entity.entries();
        if (entries.size() != 1 || !entries.containsKey(ClientQuotaEntity.USER)) {
            throw new IllegalArgumentException("Tierlog's quotas are per user (a Tierlog principal), not per "
                    + entries.keySet() + ": client-id and ip entities are not supported");
        }
        String user = entries.get(ClientQuotaEntity.USER);
        if (user == null) {
            return QuotaOverrides.DEFAULT;
        }
        if (!user.equals("bootstrap") && !KafkaAclBindings.isPrincipalName(user)) {
            throw new IllegalArgumentException("user must be a Tierlog principal (token:<id>, jwt:<subject>, "
                    + "cert:<subject>, bootstrap), not " + user);
        }
        return user;
    }

    /** One checked change, to run once every change of its entity is checked. */
    private Runnable change(String entity, ClientQuotaAlteration.Op op, Principal caller) {
        Kind kind = Kind.ofKafkaKey(op.key());
        if (kind == null) {
            throw new IllegalArgumentException("quota key " + op.key() + " is not served: "
                    + Kind.PRODUCE.kafkaKey() + " and " + Kind.FETCH.kafkaKey() + " are");
        }
        Double value = op.value();
        if (value == null) {
            return () -> {
                if (overrides.remove(entity, kind)) {
                    access.audit("quota removed user=\"" + entity + "\" " + kind.kafkaKey(), caller);
                }
            };
        }
        if (!(value >= 1) || value.isInfinite()) {
            throw new IllegalArgumentException(op.key() + " must be at least 1 byte per second, not " + value);
        }
        Rate rate = new Rate(entity, kind, value.longValue());
        return () -> {
            overrides.set(rate);
            access.audit("quota set user=\"" + entity + "\" " + kind.kafkaKey() + "=" + rate.bytesPerSecond(), caller);
        };
    }
}
