package io.tierlog.service.kafka;

import io.tierlog.access.DelegationTokenStore;
import io.tierlog.access.DelegationTokenStore.Change;
import io.tierlog.access.DelegationTokenStore.Ownership;
import io.tierlog.access.DelegationTokenStore.Token;
import io.tierlog.access.Principal;
import io.tierlog.access.ScramCredentialStore.Credential;
import io.tierlog.access.Scopes;
import io.tierlog.access.TokenRecord;
import io.tierlog.service.security.AccessControl;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.common.message.CreateDelegationTokenRequestData;
import org.apache.kafka.common.message.CreateDelegationTokenResponseData;
import org.apache.kafka.common.message.DescribeDelegationTokenRequestData;
import org.apache.kafka.common.message.ExpireDelegationTokenResponseData;
import org.apache.kafka.common.message.RenewDelegationTokenResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.CreateDelegationTokenRequest;
import org.apache.kafka.common.requests.CreateDelegationTokenResponse;
import org.apache.kafka.common.requests.DescribeDelegationTokenRequest;
import org.apache.kafka.common.requests.DescribeDelegationTokenResponse;
import org.apache.kafka.common.requests.ExpireDelegationTokenRequest;
import org.apache.kafka.common.requests.ExpireDelegationTokenResponse;
import org.apache.kafka.common.requests.RenewDelegationTokenRequest;
import org.apache.kafka.common.requests.RenewDelegationTokenResponse;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.security.token.delegation.TokenInformation;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Kafka's delegation-token APIs (KIP-48, KIP-373) over the {@link DelegationTokenStore} (docs/kafka.md "Delegation
 * tokens", ADR 0087): CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken and
 * DescribeDelegationToken with Kafka's rules and errors. A token authenticates over SASL/SCRAM as its owner
 * ({@link KafkaScram}), with the scopes of the credential that created it and the grants to the owner's name.
 * Differences from Kafka, each for the store keeping no secret: DescribeDelegationToken answers an empty HMAC (the
 * creator's answer is its only copy), and a principal may hold at most {@link #MAX_TOKENS_PER_OWNER} live tokens.
 * Requests over a connection a delegation token authenticated, and from a principal Kafka cannot name as a user (the
 * bootstrap token), are refused with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, as Kafka refuses the former; in auth mode
 * {@code none} every request is answered DELEGATION_TOKEN_AUTH_DISABLED (no SASL to use a token with).
 */
final class KafkaDelegationTokens {
    /** Live tokens one owner may hold: creation beyond it is refused (POLICY_VIOLATION) until some expire. */
    static final int MAX_TOKENS_PER_OWNER = 100;
    /** Renewers one token may name. */
    static final int MAX_RENEWERS = 100;
    private static final String USER = KafkaPrincipal.USER_TYPE;

    private final AccessControl access;
    private final KafkaAccess kafkaAccess;
    private final DelegationTokenStore store;

    KafkaDelegationTokens(AccessControl access, KafkaAccess kafkaAccess) {
        this.access = access;
        this.kafkaAccess = kafkaAccess;
        this.store = access.delegationTokens();
    }

    /** Why {@code session} may not use these APIs, or null (Kafka's {@code allowTokenRequests} and auth check). */
    private Errors refusal(KafkaSession session) {
        if (!access.tokenMode()) {
            return Errors.DELEGATION_TOKEN_AUTH_DISABLED;
        }
        Principal p = session.principal();
        if (p == null || session.byDelegationToken() || KafkaAclBindings.principalOf(
                KafkaAclBindings.kafkaUser(p.name())) == null) {
            return Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED;
        }
        return null;
    }

    CreateDelegationTokenResponse create(CreateDelegationTokenRequest request, KafkaSession session, String clientId,
                                         short version) {
        CreateDelegationTokenRequestData data = request.data();
        Principal caller = session.principal();
        CreateDelegationTokenResponseData out = new CreateDelegationTokenResponseData()
                .setPrincipalType(USER).setPrincipalName("").setIssueTimestampMs(-1).setExpiryTimestampMs(-1)
                .setMaxTimestampMs(-1).setTokenId("").setHmac(new byte[0]);
        if (version >= 3 && caller != null) { // KIP-373's requester: not in older versions' answers
            out.setTokenRequesterPrincipalType(USER).setTokenRequesterPrincipalName(
                    KafkaAclBindings.kafkaUser(caller.name()));
        }
        Errors refused = refusal(session);
        if (refused != null) {
            return new CreateDelegationTokenResponse(out.setErrorCode(refused.code()));
        }
        String owner = caller.name();
        if (data.ownerPrincipalName() != null && !data.ownerPrincipalName().isEmpty()) {
            owner = USER.equals(data.ownerPrincipalType())
                    ? KafkaAclBindings.principalOf(data.ownerPrincipalName()) : null;
            if (owner == null) {
                return new CreateDelegationTokenResponse(out.setErrorCode(Errors.INVALID_PRINCIPAL_TYPE.code()));
            }
        }
        out.setPrincipalName(KafkaAclBindings.kafkaUser(owner));
        if (!kafkaAccess.mayManageTokensOf(caller, owner, clientId)) {
            return new CreateDelegationTokenResponse(out.setErrorCode(
                    Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED.code()));
        }
        Set<String> renewers = new LinkedHashSet<>();
        for (CreateDelegationTokenRequestData.CreatableRenewers r : data.renewers()) {
            String renewer = USER.equals(r.principalType()) ? KafkaAclBindings.principalOf(r.principalName()) : null;
            if (renewer == null) {
                return new CreateDelegationTokenResponse(out.setErrorCode(Errors.INVALID_PRINCIPAL_TYPE.code()));
            }
            renewers.add(renewer);
        }
        if (renewers.size() > MAX_RENEWERS) {
            return new CreateDelegationTokenResponse(out.setErrorCode(Errors.INVALID_REQUEST.code()));
        }
        store.sweep();
        if (store.liveOwnedBy(owner) >= MAX_TOKENS_PER_OWNER) {
            return new CreateDelegationTokenResponse(out.setErrorCode(Errors.POLICY_VIOLATION.code()));
        }
        Ownership ownership = new Ownership(owner, caller.name(), List.copyOf(renewers), scopesFor(owner, caller));
        DelegationTokenStore.Created created = store.create(ownership, data.maxLifetimeMs(),
                KafkaDelegationTokens::credentials);
        Token t = created.token();
        access.audit("kafka delegation-token create id=" + t.id() + " owner=" + owner + " maxAt=" + t.maxAt(), caller);
        return new CreateDelegationTokenResponse(out.setIssueTimestampMs(t.issuedAt())
                .setExpiryTimestampMs(t.expiresAt()).setMaxTimestampMs(t.maxAt()).setTokenId(t.id())
                .setHmac(created.hmac()));
    }

    /**
     * The scopes a new token carries besides the owner's grants: the caller's own when it is the owner; a Tierlog
     * token's when an administrator creates one for it; none otherwise (grants only, as Kafka's ACLs on the user).
     */
    private Scopes scopesFor(String owner, Principal caller) {
        if (owner.equals(caller.name())) {
            return caller.scopes();
        }
        if (owner.startsWith(TokenRecord.PRINCIPAL_PREFIX)) {
            return access.tokens().usable(owner.substring(TokenRecord.PRINCIPAL_PREFIX.length()))
                    .map(TokenRecord::scopes).orElse(Scopes.NONE);
        }
        return Scopes.NONE;
    }

    RenewDelegationTokenResponse renew(RenewDelegationTokenRequest request, KafkaSession session) {
        RenewDelegationTokenResponseData out = new RenewDelegationTokenResponseData().setExpiryTimestampMs(-1);
        Errors refused = refusal(session);
        if (refused != null) {
            return new RenewDelegationTokenResponse(out.setErrorCode(refused.code()));
        }
        Change change = store.renew(request.data().hmac(), session.principal().name(),
                request.data().renewPeriodMs());
        if (change.status() == DelegationTokenStore.Status.DONE) {
            access.audit("kafka delegation-token renew expiresAt=" + change.expiresAt(), session.principal());
        }
        return new RenewDelegationTokenResponse(out.setErrorCode(error(change).code())
                .setExpiryTimestampMs(change.expiresAt()));
    }

    ExpireDelegationTokenResponse expire(ExpireDelegationTokenRequest request, KafkaSession session) {
        ExpireDelegationTokenResponseData out = new ExpireDelegationTokenResponseData().setExpiryTimestampMs(-1);
        Errors refused = refusal(session);
        if (refused != null) {
            return new ExpireDelegationTokenResponse(out.setErrorCode(refused.code()));
        }
        long period = request.data().expiryTimePeriodMs();
        Change change = store.expire(request.data().hmac(), session.principal().name(), period);
        if (change.status() == DelegationTokenStore.Status.DONE) {
            access.audit("kafka delegation-token expire " + (period < 0 ? "now" : "expiresAt=" + change.expiresAt()),
                    session.principal());
        }
        return new ExpireDelegationTokenResponse(out.setErrorCode(error(change).code())
                .setExpiryTimestampMs(change.expiresAt()));
    }

    /**
     * Kafka's describe: the live tokens the caller owns, requested or may renew, and every other token for an
     * administrator; with owners named, only tokens one of them owns, requested or may renew (none for an empty list).
     */
    DescribeDelegationTokenResponse describe(DescribeDelegationTokenRequest request, KafkaSession session,
                                             short version) {
        Errors refused = refusal(session);
        if (refused != null) {
            return new DescribeDelegationTokenResponse(version, 0, refused);
        }
        Principal caller = session.principal();
        List<DescribeDelegationTokenRequestData.DescribeDelegationTokenOwner> owners = request.data().owners();
        List<String> named = owners == null ? null : owners.stream()
                .filter(o -> USER.equals(o.principalType()))
                .map(o -> KafkaAclBindings.principalOf(o.principalName())).filter(n -> n != null).toList();
        List<DelegationToken> out = new ArrayList<>();
        for (Token t : store.live()) {
            Ownership o = t.ownership();
            if (named != null && named.stream().noneMatch(o::manageableBy)) {
                continue;
            }
            if (o.manageableBy(caller.name()) || kafkaAccess.maySeeTokensOf(caller, o.owner())) {
                out.add(described(t));
            }
        }
        return new DescribeDelegationTokenResponse(version, 0, Errors.NONE, out);
    }

    private static DelegationToken described(Token t) {
        Ownership o = t.ownership();
        List<KafkaPrincipal> renewers = o.renewers().stream().map(KafkaDelegationTokens::kafkaPrincipal).toList();
        TokenInformation info = new TokenInformation(t.id(), kafkaPrincipal(o.owner()),
                kafkaPrincipal(o.requester()), renewers, t.issuedAt(), t.maxAt(), t.expiresAt());
        // The store keeps no HMAC: its creator's answer was the only copy.
        return new DelegationToken(info, new byte[0]);
    }

    private static KafkaPrincipal kafkaPrincipal(String principal) {
        return new KafkaPrincipal(USER, KafkaAclBindings.kafkaUser(principal));
    }

    private static Errors error(Change change) {
        return switch (change.status()) {
            case DONE -> Errors.NONE;
            case NOT_FOUND -> Errors.DELEGATION_TOKEN_NOT_FOUND;
            case NOT_MANAGER -> Errors.DELEGATION_TOKEN_OWNER_MISMATCH;
            case EXPIRED -> Errors.DELEGATION_TOKEN_EXPIRED;
        };
    }

    /** A token password's SCRAM credentials, both mechanisms at their fewest iterations, as Kafka derives them. */
    private static List<Credential> credentials(String id, String password) {
        List<Credential> out = new ArrayList<>();
        for (String mechanism : KafkaScram.MECHANISMS) {
            ScramMechanism m = ScramMechanism.fromMechanismName(mechanism);
            ScramCredential c = KafkaInternals.scramCredential(m, password, KafkaInternals.minIterations(m));
            out.add(new Credential(id, mechanism, c.salt(), c.iterations(), c.storedKey(), c.serverKey()));
        }
        return out;
    }
}
