package io.tierlog.service.kafka;

import io.tierlog.access.GrantStore;
import io.tierlog.access.GrantStore.Grant;
import io.tierlog.access.InvalidScopeException;
import io.tierlog.access.Operation;
import io.tierlog.access.Resource;
import io.tierlog.access.Scope;
import io.tierlog.access.ScramCredentialStore;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Kafka's ACL bindings as Tierlog grants and back (docs/kafka.md "ACLs"). An ACL allows or denies one principal one
 * operation on a pattern of resources; a grant gives a principal one scope or takes it away (a denying grant, ADR
 * 0068), so each maps to the other, with Kafka's names:
 * <ul>
 *   <li>Principal {@code User:<name>} is the Tierlog principal {@code <name>} ({@code token:<id>}, {@code jwt:<sub>},
 *   {@code cert:<subject>}); {@code User:<user>}, a name with no kind before a colon, is the SCRAM user's
 *   ({@code scram:<user>}, as Kafka names a SCRAM user; {@code User:scram:<user>} is read the same);
 *   {@code User:*} is every authenticated caller.</li>
 *   <li>Pattern: LITERAL {@code orders} is the scope name {@code orders}, PREFIXED {@code orders} is
 *   {@code orders*}, LITERAL {@code *} is {@code *} (every name).</li>
 *   <li>Topic WRITE, READ, DESCRIBE, CREATE, ALTER, DELETE are produce, fetch, describe, create, alter, delete; group
 *   READ is read and commit (Kafka's READ lets a member commit), DELETE is delete; transactional id WRITE and
 *   DESCRIBE are produce and describe; ALL is each of its resource's operations; ALL on the cluster
 *   ({@code kafka-cluster}) is {@code admin:cluster}.</li>
 * </ul>
 * A host other than {@code *} is an IPv4 or IPv6 address: the grant holds only for callers connecting from it
 * (ADR 0069). What has no grant is refused with the reason, never stored approximately: DENY on the cluster (revoke
 * the admin scope instead), a host name, an operation Tierlog does not separate (DESCRIBE_CONFIGS: describe covers it;
 * group DESCRIBE: read does), and other resource types. Stateless.
 */
final class KafkaAclBindings {
    static final String CLUSTER_NAME = "kafka-cluster";
    private static final String USER = "User:";
    private static final String ANY_HOST = "*";
    private static final int MAX_PRINCIPAL_CHARS = 1024;

    private static final Map<Operation, AclOperation> TOPIC_OPS = Map.of(Operation.PRODUCE, AclOperation.WRITE,
            Operation.FETCH, AclOperation.READ, Operation.DESCRIBE, AclOperation.DESCRIBE,
            Operation.CREATE, AclOperation.CREATE, Operation.ALTER, AclOperation.ALTER,
            Operation.DELETE, AclOperation.DELETE);
    private static final Map<Operation, AclOperation> GROUP_OPS = Map.of(Operation.READ, AclOperation.READ,
            Operation.COMMIT, AclOperation.READ, Operation.DELETE, AclOperation.DELETE);
    private static final Map<Operation, AclOperation> TRANSACTION_OPS = Map.of(Operation.PRODUCE, AclOperation.WRITE,
            Operation.DESCRIBE, AclOperation.DESCRIBE);

    private KafkaAclBindings() {
    }

    /** An ACL that cannot be a grant, and why (answered as INVALID_REQUEST with this message). */
    static final class NotAGrant extends RuntimeException {
        NotAGrant(String message) {
            super(message, null, false, false);
        }
    }

    /** The ACL a grant is. */
    static AclBinding binding(Grant grant) {
        Scope s = grant.scope();
        String principal = USER + kafkaUser(grant.principal());
        AclPermissionType permission = grant.deny() ? AclPermissionType.DENY : AclPermissionType.ALLOW;
        String host = grant.host() == null ? ANY_HOST : grant.host();
        AccessControlEntry entry;
        ResourcePattern pattern;
        if (s.kind() == Resource.Kind.CLUSTER) {
            pattern = new ResourcePattern(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL);
            entry = new AccessControlEntry(principal, host, AclOperation.ALL, permission);
        } else {
            ResourceType type = switch (s.kind()) {
                case TOPIC -> ResourceType.TOPIC;
                case GROUP -> ResourceType.GROUP;
                default -> ResourceType.TRANSACTIONAL_ID;
            };
            boolean every = s.prefix() && s.name().isEmpty();
            pattern = new ResourcePattern(type, every ? ResourcePattern.WILDCARD_RESOURCE : s.name(),
                    s.prefix() && !every ? PatternType.PREFIXED : PatternType.LITERAL);
            entry = new AccessControlEntry(principal, host, operations(s.kind()).get(s.operation()), permission);
        }
        return new AclBinding(pattern, entry);
    }

    /**
     * The grants an ACL is (more than one for ALL and a group's READ).
     *
     * @throws NotAGrant naming what Tierlog cannot store
     */
    static List<Grant> grants(AclBinding acl) {
        AccessControlEntry entry = acl.entry();
        if (entry.permissionType() != AclPermissionType.ALLOW && entry.permissionType() != AclPermissionType.DENY) {
            throw new NotAGrant("permission type must be ALLOW or DENY, not " + entry.permissionType());
        }
        boolean deny = entry.permissionType() == AclPermissionType.DENY;
        String host;
        try {
            host = ANY_HOST.equals(entry.host()) ? null : IpAddresses.canonical(entry.host());
        } catch (IllegalArgumentException e) {
            throw new NotAGrant("host must be * or an IP address, not " + entry.host());
        }
        String principal = principal(entry.principal());
        ResourcePattern pattern = acl.pattern();
        if (pattern.patternType() != PatternType.LITERAL && pattern.patternType() != PatternType.PREFIXED) {
            throw new NotAGrant("pattern type must be LITERAL or PREFIXED, not " + pattern.patternType());
        }
        AclOperation op = entry.operation();
        if (pattern.resourceType() == ResourceType.CLUSTER) {
            if (!CLUSTER_NAME.equals(pattern.name()) || pattern.patternType() != PatternType.LITERAL) {
                throw new NotAGrant("the cluster resource is LITERAL " + CLUSTER_NAME);
            }
            if (op != AclOperation.ALL) {
                throw new NotAGrant("on the cluster only ALL (Tierlog's admin:cluster) can be granted, not " + op);
            }
            if (deny) {
                throw new NotAGrant("the cluster cannot be denied: admin:cluster is every operation, so revoke the "
                        + "principal's admin scope (its token, or the ALLOW ACL) instead");
            }
            return List.of(new Grant(principal, Scope.ADMIN, false, host));
        }
        Resource.Kind kind = switch (pattern.resourceType()) {
            case TOPIC -> Resource.Kind.TOPIC;
            case GROUP -> Resource.Kind.GROUP;
            case TRANSACTIONAL_ID -> Resource.Kind.TRANSACTION;
            default -> throw new NotAGrant("resource type must be TOPIC, GROUP, TRANSACTIONAL_ID or CLUSTER, not "
                    + pattern.resourceType());
        };
        Map<Operation, AclOperation> ops = operations(kind);
        String name = pattern.patternType() == PatternType.PREFIXED ? pattern.name() + "*"
                : ResourcePattern.WILDCARD_RESOURCE.equals(pattern.name()) ? "*" : pattern.name();
        if (pattern.patternType() == PatternType.PREFIXED && pattern.name().isEmpty()) {
            throw new NotAGrant("a PREFIXED pattern needs a prefix (LITERAL * names every " + kind.id() + ")");
        }
        List<Grant> out = new ArrayList<>();
        for (Map.Entry<Operation, AclOperation> e : ops.entrySet()) {
            if (op == AclOperation.ALL || e.getValue() == op) {
                try {
                    out.add(new Grant(principal, Scope.parse(e.getKey().id() + ":" + kind.id() + ":" + name), deny,
                            host));
                } catch (InvalidScopeException invalid) {
                    throw new NotAGrant(invalid.getMessage());
                }
            }
        }
        if (out.isEmpty()) {
            throw new NotAGrant("operation " + op + " on a " + pattern.resourceType() + " has no Tierlog scope; "
                    + "grantable: " + ops.values().stream().distinct().sorted().toList() + " or ALL");
        }
        out.sort(Comparator.comparing(g -> g.scope().toString()));
        return out;
    }

    /** {@code User:<name>} as a Tierlog principal name ({@link GrantStore#EVERY_PRINCIPAL} for {@code User:*}). */
    private static String principal(String kafkaPrincipal) {
        String name = kafkaPrincipal == null || !kafkaPrincipal.startsWith(USER) ? null
                : kafkaPrincipal.substring(USER.length());
        String principal = name == null || name.equals(GrantStore.EVERY_PRINCIPAL) ? name : principalOf(name);
        if (principal == null) {
            throw new NotAGrant("principal must be User:token:<id>, User:jwt:<subject>, User:cert:<subject>, "
                    + "User:<SCRAM user> or User:*, not " + kafkaPrincipal);
        }
        return principal;
    }

    /**
     * A Kafka user name (an ACL's principal after {@code User:}, a quota's user entity) as a Tierlog principal name:
     * one with a kind ({@code token:}, {@code jwt:}, {@code cert:}, {@code scram:}) as it is, a bare name as the SCRAM
     * user's; null when it is neither.
     */
    static String principalOf(String kafkaUser) {
        if (isPrincipalName(kafkaUser)) {
            return kafkaUser;
        }
        String scram = ScramCredentialStore.principalName(kafkaUser);
        return isPrincipalName(scram) ? scram : null;
    }

    /** A Tierlog principal name as Kafka names the user: a SCRAM user by its bare name, others as they are. */
    static String kafkaUser(String principal) {
        return principal.startsWith(ScramCredentialStore.PRINCIPAL_PREFIX)
                ? principal.substring(ScramCredentialStore.PRINCIPAL_PREFIX.length()) : principal;
    }

    /** Whether {@code name} is a Tierlog principal a grant or quota can name: token, JWT, certificate or SCRAM user. */
    static boolean isPrincipalName(String name) {
        if (name.startsWith(ScramCredentialStore.PRINCIPAL_PREFIX)) {
            return KafkaScram.nameRefusal(name.substring(ScramCredentialStore.PRINCIPAL_PREFIX.length())) == null;
        }
        boolean known = name.matches("token:[0-9a-f]{32}")
                || (name.startsWith("jwt:") || name.startsWith("cert:")) && name.indexOf(':') < name.length() - 1;
        return known && name.length() <= MAX_PRINCIPAL_CHARS && name.chars().noneMatch(Character::isISOControl);
    }

    private static Map<Operation, AclOperation> operations(Resource.Kind kind) {
        return switch (kind) {
            case TOPIC -> TOPIC_OPS;
            case GROUP -> GROUP_OPS;
            default -> TRANSACTION_OPS;
        };
    }
}
