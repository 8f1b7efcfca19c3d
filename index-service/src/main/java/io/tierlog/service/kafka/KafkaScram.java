package io.tierlog.service.kafka;

import io.tierlog.access.DelegationTokenStore;
import io.tierlog.access.DelegationTokenStore.Token;
import io.tierlog.access.Principal;
import io.tierlog.access.ScramCredentialStore;
import io.tierlog.access.ScramCredentialStore.Credential;
import io.tierlog.service.security.AccessControl;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.CredentialInfo;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsResponse;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsResponse;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.ScramCredentialCallback;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.sasl.SaslServer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * SCRAM users on the Kafka listener (docs/kafka.md "SCRAM users", ADR 0072): Kafka's {@code AlterUserScramCredentials}
 * and {@code DescribeUserScramCredentials} (KIP-554) over the {@link ScramCredentialStore}, and the server side of
 * SASL/SCRAM-SHA-256 and -512 (RFC 5802, RFC 7677) as kafka-clients' own server runs it
 * ({@link KafkaInternals#scramServer}), fed from that store. The alteration carries the salted password, never the
 * password (the client salts it); the store keeps the two keys derived from it. A user nobody created gets a made-up
 * credential (its salt a keyed hash of the name), so the exchange fails at the proof as a wrong password does, not at
 * the first message, which would tell who exists. A {@code tokenauth} exchange authenticates with a Kafka delegation
 * token ({@link KafkaDelegationTokens}) as its owner.
 */
final class KafkaScram {
    /** The mechanism names, as SaslHandshake lists them. */
    static final List<String> MECHANISMS = List.of(ScramMechanism.SCRAM_SHA_256.mechanismName(),
            ScramMechanism.SCRAM_SHA_512.mechanismName());
    private static final String TWICE = "A user credential cannot be altered twice in the same request";
    /** Names of principals with no kind before a colon, which an ACL's {@code User:<name>} must not turn into. */
    private static final Set<String> RESERVED = Set.of("bootstrap", "anonymous");
    /** Longest user name accepted, in characters. */
    static final int MAX_USER_LENGTH = 256;

    private final AccessControl access;
    private final ScramCredentialStore store;
    private final DelegationTokenStore tokens;
    /** Keys the made-up salts of users with no credential; this process's own. */
    private final byte[] unknownUserKey = new byte[32];
    private final SecureRandom random = new SecureRandom();

    KafkaScram(AccessControl access) {
        this.access = access;
        this.store = access.scramCredentials();
        this.tokens = access.delegationTokens();
        random.nextBytes(unknownUserKey);
    }

    static boolean isScram(String mechanism) {
        return MECHANISMS.contains(mechanism);
    }

    /**
     * One SASL/SCRAM exchange: kafka-clients' server side, and the delegation token it authenticates with when the
     * client sent {@code tokenauth=true} (null for a SCRAM user).
     */
    static final class Exchange {
        final SaslServer server;
        private volatile Token token;

        private Exchange(ScramMechanism mechanism, KafkaScram scram) {
            // The server calls back only while evaluating a message, after this constructor returned.
            this.server = KafkaInternals.scramServer(mechanism, callbacks -> scram.credentialFor(mechanism, callbacks,
                    this));
        }

        /** The delegation token the exchange is for, or null (a SCRAM user, or an unknown or unusable token). */
        Token token() {
            return token;
        }
    }

    /** A new server side of one SASL/SCRAM exchange for {@code mechanism} ({@link #isScram}). */
    Exchange newExchange(String mechanism) {
        return new Exchange(ScramMechanism.fromMechanismName(mechanism), this);
    }

    private void credentialFor(ScramMechanism mechanism, Callback[] callbacks, Exchange exchange)
            throws UnsupportedCallbackException {
        String user = null;
        for (Callback callback : callbacks) {
            if (callback instanceof NameCallback name) {
                user = name.getDefaultName();
            } else if (KafkaInternals.isDelegationTokenCallback(callback)) {
                tokenCredential(mechanism, user, (ScramCredentialCallback) callback, exchange);
            } else if (callback instanceof ScramCredentialCallback credential) {
                String named = user;
                credential.scramCredential(store.find(named, mechanism.mechanismName())
                        .map(KafkaScram::scramCredential)
                        .orElseGet(() -> madeUp(mechanism, named)));
            } else {
                throw new UnsupportedCallbackException(callback);
            }
        }
    }

    /**
     * A delegation token's credential (the user name is its id): its owner and expiry for kafka-clients' server, or,
     * for a token that is unknown, expired, revoked or whose owner token is, a made-up credential and owner, so the
     * exchange fails at the proof as a wrong password does.
     */
    private void tokenCredential(ScramMechanism mechanism, String id, ScramCredentialCallback callback,
                                 Exchange exchange) {
        Token token = tokens.usable(id).filter(t -> access.delegatedPrincipal(t).isPresent()).orElse(null);
        ScramCredential credential = token == null ? null : token.credential(mechanism.mechanismName())
                .map(KafkaScram::scramCredential).orElse(null);
        if (credential == null) {
            KafkaInternals.tokenOwner(callback, "unknown", null);
            callback.scramCredential(madeUp(mechanism, "token\u0000" + id));
            return;
        }
        exchange.token = token;
        KafkaInternals.tokenOwner(callback, token.ownership().owner(), token.expiresAt());
        callback.scramCredential(credential);
    }

    private static ScramCredential scramCredential(Credential c) {
        return new ScramCredential(c.salt(), c.storedKey(), c.serverKey(), c.iterations());
    }

    /** A credential no proof matches, with a salt that stays the same for a name (as a real one would). */
    private ScramCredential madeUp(ScramMechanism mechanism, String user) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(unknownUserKey, "HmacSHA256"));
            byte[] salt = mac.doFinal((mechanism.mechanismName() + '\u0000' + user).getBytes(StandardCharsets.UTF_8));
            byte[] stored = new byte[64];
            byte[] server = new byte[64];
            random.nextBytes(stored);
            random.nextBytes(server);
            return new ScramCredential(salt, stored, server, KafkaInternals.minIterations(mechanism));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks HmacSHA256", e);
        }
    }

    /** KIP-554's describe: every user's mechanisms and iterations, or the named users' (RESOURCE_NOT_FOUND if none). */
    DescribeUserScramCredentialsResponse describe(DescribeUserScramCredentialsRequest request) {
        DescribeUserScramCredentialsRequestData data = request.data();
        List<DescribeUserScramCredentialsResult> results = new ArrayList<>();
        if (data.users() == null || data.users().isEmpty()) {
            Map<String, List<Credential>> byUser = new LinkedHashMap<>();
            store.list().forEach(c -> byUser.computeIfAbsent(c.user(), u -> new ArrayList<>()).add(c));
            byUser.forEach((user, credentials) -> results.add(described(user, credentials)));
        } else {
            Map<String, Integer> asked = new LinkedHashMap<>();
            data.users().forEach(u -> asked.merge(u.name(), 1, Integer::sum));
            for (Map.Entry<String, Integer> named : asked.entrySet()) {
                String user = named.getKey();
                List<Credential> credentials = List.copyOf(store.of(user).values());
                if (named.getValue() > 1) {
                    results.add(new DescribeUserScramCredentialsResult().setUser(user)
                            .setErrorCode(Errors.DUPLICATE_RESOURCE.code())
                            .setErrorMessage("Cannot describe SCRAM credentials for the same user twice in a single "
                                    + "request: " + user));
                } else if (credentials.isEmpty()) {
                    results.add(new DescribeUserScramCredentialsResult().setUser(user)
                            .setErrorCode(Errors.RESOURCE_NOT_FOUND.code())
                            .setErrorMessage("Attempt to describe nonexistent user credentials: " + user));
                } else {
                    results.add(described(user, credentials));
                }
            }
        }
        return new DescribeUserScramCredentialsResponse(new DescribeUserScramCredentialsResponseData()
                .setResults(results));
    }

    private static DescribeUserScramCredentialsResult described(String user, List<Credential> credentials) {
        List<CredentialInfo> infos = credentials.stream()
                .sorted(java.util.Comparator.comparing(Credential::mechanism))
                .map(c -> new CredentialInfo().setMechanism(typeOf(c.mechanism())).setIterations(c.iterations()))
                .toList();
        return new DescribeUserScramCredentialsResult().setUser(user).setCredentialInfos(new ArrayList<>(infos));
    }

    /**
     * KIP-554's alteration: deletions and upsertions, one result per user; a user with any refused change keeps
     * every credential it had (its changes apply together or not at all), the others' apply, each durable before the
     * answer. Kafka's checks and errors: a user named twice for one mechanism (DUPLICATE_RESOURCE), an empty or
     * unusable name, too few or too many iterations, a salted password of the wrong length (UNACCEPTABLE_CREDENTIAL),
     * an unknown mechanism (UNSUPPORTED_SASL_MECHANISM), deleting what is not there (RESOURCE_NOT_FOUND).
     */
    AlterUserScramCredentialsResponse alter(AlterUserScramCredentialsRequest request, Principal by) {
        AlterUserScramCredentialsRequestData data = request.data();
        Map<String, AlterUserScramCredentialsResult> results = new LinkedHashMap<>();
        Map<String, List<Runnable>> changes = new LinkedHashMap<>();
        Set<String> seen = new HashSet<>();
        for (AlterUserScramCredentialsRequestData.ScramCredentialDeletion d : data.deletions()) {
            String user = d.name();
            results.putIfAbsent(user, new AlterUserScramCredentialsResult().setUser(user));
            ScramMechanism mechanism = mechanismOf(d.mechanism());
            String refusal = nameRefusal(user);
            if (refusal != null) {
                refuse(results, user, Errors.UNACCEPTABLE_CREDENTIAL, refusal);
            } else if (mechanism == null) {
                refuse(results, user, Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism " + d.mechanism());
            } else if (!seen.add(user + '\u0000' + mechanism.mechanismName())) {
                refuse(results, user, Errors.DUPLICATE_RESOURCE, TWICE);
            } else if (store.find(user, mechanism.mechanismName()).isEmpty()) {
                refuse(results, user, Errors.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not "
                        + "exist");
            } else {
                changes.computeIfAbsent(user, u -> new ArrayList<>()).add(() -> {
                    store.remove(user, mechanism.mechanismName());
                    access.audit("kafka scram-credential delete user=" + user + " mechanism="
                            + mechanism.mechanismName(), by);
                });
            }
        }
        for (AlterUserScramCredentialsRequestData.ScramCredentialUpsertion u : data.upsertions()) {
            String user = u.name();
            results.putIfAbsent(user, new AlterUserScramCredentialsResult().setUser(user));
            ScramMechanism mechanism = mechanismOf(u.mechanism());
            String refusal = nameRefusal(user);
            if (refusal != null) {
                refuse(results, user, Errors.UNACCEPTABLE_CREDENTIAL, refusal);
            } else if (mechanism == null) {
                refuse(results, user, Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism " + u.mechanism());
            } else if ((refusal = credentialRefusal(u, mechanism)) != null) {
                refuse(results, user, Errors.UNACCEPTABLE_CREDENTIAL, refusal);
            } else if (!seen.add(user + '\u0000' + mechanism.mechanismName())) {
                refuse(results, user, Errors.DUPLICATE_RESOURCE, TWICE);
            } else {
                Credential credential = derived(user, mechanism, u);
                changes.computeIfAbsent(user, k -> new ArrayList<>()).add(() -> {
                    store.put(credential);
                    access.audit("kafka scram-credential set user=" + user + " mechanism="
                            + mechanism.mechanismName() + " iterations=" + credential.iterations(), by);
                });
            }
        }
        changes.forEach((user, work) -> {
            if (results.get(user).errorCode() == Errors.NONE.code()) {
                work.forEach(Runnable::run);
            }
        });
        return new AlterUserScramCredentialsResponse(new AlterUserScramCredentialsResponseData()
                .setResults(new ArrayList<>(results.values())));
    }

    private static void refuse(Map<String, AlterUserScramCredentialsResult> results, String user, Errors error,
                               String message) {
        AlterUserScramCredentialsResult result = results.get(user);
        if (result.errorCode() == Errors.NONE.code()) {
            result.setErrorCode(error.code()).setErrorMessage(message);
        }
    }

    /**
     * Why {@code user} cannot name a SCRAM user, or null. A colon is refused because a principal name's kind ends at
     * its first one ({@code scram:alice}, {@code token:<id>}), so a grant's principal always says which kind it is;
     * {@code bootstrap} and {@code anonymous} because they are principal names already.
     */
    static String nameRefusal(String user) {
        if (user == null || user.isEmpty()) {
            return "Username must not be empty";
        }
        if (user.length() > MAX_USER_LENGTH) {
            return "Username must be at most " + MAX_USER_LENGTH + " characters";
        }
        if (user.indexOf(':') >= 0 || user.chars().anyMatch(Character::isISOControl)) {
            return "Username must not contain ':' or control characters";
        }
        if (RESERVED.contains(user)) {
            return "Username " + user + " is reserved: it names Tierlog's own principal";
        }
        return null;
    }

    private static String credentialRefusal(AlterUserScramCredentialsRequestData.ScramCredentialUpsertion u,
                                            ScramMechanism mechanism) {
        int fewest = KafkaInternals.minIterations(mechanism);
        int most = KafkaInternals.maxIterations(mechanism);
        if (u.iterations() < fewest) {
            return "Too few iterations: at least " + fewest;
        }
        if (u.iterations() > most) {
            return "Too many iterations: at most " + most;
        }
        if (u.salt() == null || u.salt().length == 0) {
            return "Salt must not be empty";
        }
        int hashLength = mechanism == ScramMechanism.SCRAM_SHA_256 ? 32 : 64;
        if (u.saltedPassword() == null || u.saltedPassword().length != hashLength) {
            return "Salted password must be " + hashLength + " bytes for " + mechanism.mechanismName();
        }
        return null;
    }

    /** RFC 5802's StoredKey and ServerKey from the salted password, which is not kept. */
    private static Credential derived(String user, ScramMechanism mechanism,
                                      AlterUserScramCredentialsRequestData.ScramCredentialUpsertion u) {
        ScramCredential c = KafkaInternals.scramCredential(mechanism, u.salt(), u.saltedPassword(), u.iterations());
        return new Credential(user, mechanism.mechanismName(), c.salt(), c.iterations(), c.storedKey(), c.serverKey());
    }

    private static ScramMechanism mechanismOf(byte type) {
        ScramMechanism m = ScramMechanism.fromType(type);
        return m == ScramMechanism.UNKNOWN ? null : m;
    }

    private static byte typeOf(String mechanismName) {
        return ScramMechanism.fromMechanismName(mechanismName).type();
    }
}
