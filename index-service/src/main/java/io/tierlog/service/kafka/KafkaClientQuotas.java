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

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Kafka's client-quota APIs (DescribeClientQuotas, AlterClientQuotas: {@code kafka-configs --entity-type users},
 * {@code clients} and {@code ips}) over the rates administrators set ({@link QuotaOverrides}): a {@code user} entity
 * is a Tierlog principal ({@code token:<id>}, {@code jwt:<sub>}, {@code cert:<subject>}, {@code bootstrap}), a
 * {@code client-id} entity a Kafka client id, alone or with a user, with the keys {@code producer_byte_rate},
 * {@code consumer_byte_rate} and {@code controller_mutation_rate}; an {@code ip} entity an address, with
 * {@code connection_creation_rate} only; the default of each is each one without its own rate. Rates are whole units
 * per second. Other keys are refused with INVALID_REQUEST and the reason; an entity's changes are all checked before
 * any is written. Only
 * {@code admin:cluster} reaches these APIs ({@link KafkaAccess}). Blocking (file writes on the shared volume): runs
 * on a worker. Thread-safe.
 */
@Singleton
public class KafkaClientQuotas {
    /** Kafka's own limit on a client id is none; this keeps a stored entity's name bounded. */
    private static final int MAX_CLIENT_ID_CHARS = 1024;

    private final QuotaOverrides overrides;
    private final AccessControl access;

    public KafkaClientQuotas(Quotas quotas, AccessControl access) {
        this.overrides = quotas.overrides();
        this.access = access;
    }

    /** The rates of every entity the filter matches. */
    DescribeClientQuotasResponse describe(DescribeClientQuotasRequest request) {
        ClientQuotaFilter filter;
        try {
            filter = request.filter();
        } catch (IllegalArgumentException | NullPointerException e) {
            // kafka-clients' reading of a component: a match type it does not know, an exact match without a name
            return new DescribeClientQuotasResponse(new DescribeClientQuotasResponseData()
                    .setErrorCode(Errors.INVALID_REQUEST.code())
                    .setErrorMessage("a filter component has an unknown match type, or an exact match no name"));
        }
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
            Map<String, String> entries = kafkaEntries(r.entity());
            if (matches(filter, entries)) {
                out.computeIfAbsent(new ClientQuotaEntity(entries), e -> new HashMap<>())
                        .put(r.kind().kafkaKey(), r.kind().toKafka(r.perSecond()));
            }
        }
        return DescribeClientQuotasResponse.fromQuotaEntities(out, 0);
    }

    /**
     * Kafka's filter rules: the entity has every component's type, with a name it matches (any specified name, the
     * default, or that name); a strict filter also wants no other type.
     *
     * @param entries the entity by type, a null name for the default
     */
    private static boolean matches(ClientQuotaFilter filter, Map<String, String> entries) {
        for (ClientQuotaFilterComponent c : filter.components()) {
            if (!entries.containsKey(c.entityType())) {
                return false;
            }
            String name = entries.get(c.entityType());
            boolean match = c.match() == null ? name != null // any specified name
                    : c.match().isEmpty() ? name == null // the default
                    : c.match().get().equals(name);
            if (!match) {
                return false;
            }
        }
        return !filter.strict() || entries.size() == filter.components().size();
    }

    /** A stored entity as Kafka names it: by type, the default as null. */
    private static Map<String, String> kafkaEntries(QuotaOverrides.Entity entity) {
        Map<String, String> entries = new HashMap<>();
        if (entity.user() != null) {
            entries.put(ClientQuotaEntity.USER, QuotaOverrides.DEFAULT.equals(entity.user()) ? null
                    : KafkaAclBindings.kafkaUser(entity.user()));
        }
        if (entity.client() != null) {
            entries.put(ClientQuotaEntity.CLIENT_ID,
                    QuotaOverrides.DEFAULT.equals(entity.client()) ? null : entity.client());
        }
        if (entity.ip() != null) {
            entries.put(ClientQuotaEntity.IP, QuotaOverrides.DEFAULT.equals(entity.ip()) ? null : entity.ip());
        }
        return entries;
    }

    /** Each entity's changes, all checked before any is written; durable before the answer unless validate-only. */
    AlterClientQuotasResponse alter(AlterClientQuotasRequest request, Principal caller) {
        Map<ClientQuotaEntity, ApiError> out = new LinkedHashMap<>();
        for (ClientQuotaAlteration entry : request.entries()) {
            try {
                QuotaOverrides.Entity entity = entity(entry.entity());
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

    /** The entity in {@link QuotaOverrides}; throws naming why when Tierlog cannot hold it. */
    private static QuotaOverrides.Entity entity(ClientQuotaEntity entity) {
        Map<String, String> entries = entity.entries();
        for (String type : entries.keySet()) {
            if (!type.equals(ClientQuotaEntity.USER) && !type.equals(ClientQuotaEntity.CLIENT_ID)
                    && !type.equals(ClientQuotaEntity.IP)) {
                throw new IllegalArgumentException("entity type " + type + " is not supported: Tierlog's quotas are "
                        + "per user (a Tierlog principal), per client id and per ip");
            }
        }
        if (entries.containsKey(ClientQuotaEntity.IP)) {
            if (entries.size() > 1) {
                throw new IllegalArgumentException("an ip entity stands alone");
            }
            String ip = entries.get(ClientQuotaEntity.IP);
            try {
                return QuotaOverrides.Entity.ip(ip == null ? QuotaOverrides.DEFAULT : IpAddresses.canonical(ip));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("ip " + e.getMessage());
            }
        }
        String user = null;
        if (entries.containsKey(ClientQuotaEntity.USER)) {
            user = entries.get(ClientQuotaEntity.USER);
            if (user == null) {
                user = QuotaOverrides.DEFAULT;
            } else if (!user.equals("bootstrap")) {
                String principal = KafkaAclBindings.principalOf(user);
                if (principal == null) {
                    throw new IllegalArgumentException("user must be a Tierlog principal (token:<id>, jwt:<subject>, "
                            + "cert:<subject>, bootstrap) or a SCRAM user, not " + user);
                }
                user = principal;
            }
        }
        String client = null;
        if (entries.containsKey(ClientQuotaEntity.CLIENT_ID)) {
            client = entries.get(ClientQuotaEntity.CLIENT_ID);
            if (client == null) {
                client = QuotaOverrides.DEFAULT;
            } else if (client.length() > MAX_CLIENT_ID_CHARS || client.chars().anyMatch(Character::isISOControl)
                    || client.equals(QuotaOverrides.DEFAULT)) {
                throw new IllegalArgumentException("client id must be at most " + MAX_CLIENT_ID_CHARS
                        + " characters without control characters, and not " + QuotaOverrides.DEFAULT);
            }
        }
        return new QuotaOverrides.Entity(user, client);
    }

    /** A key's value as a person writes it: 1024, 0.0001. */
    private static String plain(double value) {
        return BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
    }

    /** How an entity appears in the audit log. */
    private static String audited(QuotaOverrides.Entity entity) {
        if (entity.ip() != null) {
            return "ip=\"" + entity.ip() + "\"";
        }
        return (entity.user() == null ? "" : "user=\"" + entity.user() + "\"")
                + (entity.user() != null && entity.client() != null ? " " : "")
                + (entity.client() == null ? "" : "client=\"" + entity.client() + "\"");
    }

    /** One checked change, to run once every change of its entity is checked. */
    private Runnable change(QuotaOverrides.Entity entity, ClientQuotaAlteration.Op op, Principal caller) {
        Kind kind = Kind.ofKafkaKey(op.key());
        boolean ip = entity.ip() != null;
        if (kind == null || ip != (kind == Kind.CONNECTION)) {
            throw new IllegalArgumentException("quota key " + op.key() + " is not served for this entity: "
                    + (ip ? Kind.CONNECTION.kafkaKey() + " is" : Kind.PRODUCE.kafkaKey() + ", "
                    + Kind.FETCH.kafkaKey() + ", " + Kind.MUTATION.kafkaKey() + " and " + Kind.REQUEST.kafkaKey()
                    + " are"));
        }
        Double value = op.value();
        if (value == null) {
            return () -> {
                if (overrides.remove(entity, kind)) {
                    access.audit("quota removed " + audited(entity) + " " + kind.kafkaKey(), caller);
                }
            };
        }
        OptionalLong perSecond = kind.fromKafka(value);
        if (perSecond.isEmpty()) {
            throw new IllegalArgumentException(op.key() + " must be at least " + plain(kind.toKafka(1)) + " ("
                    + kind.kafkaUnit() + "), not " + value);
        }
        Rate rate = new Rate(entity, kind, perSecond.getAsLong());
        return () -> {
            overrides.set(rate);
            access.audit("quota set " + audited(entity) + " " + kind.kafkaKey() + "="
                    + plain(kind.toKafka(rate.perSecond())), caller);
        };
    }
}
