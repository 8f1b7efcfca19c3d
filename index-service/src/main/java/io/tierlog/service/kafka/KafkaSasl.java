package io.tierlog.service.kafka;

import io.tierlog.access.DelegationTokenStore;
import io.tierlog.access.Principal;
import io.tierlog.service.security.AccessControl;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;

import javax.security.sasl.SaslException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * SASL on the Kafka listener in {@code token} auth mode (KIP-152's SaslHandshake v1 + SaslAuthenticate), mapped to
 * Tierlog's tokens through {@link AccessControl#authenticateToken}, the check HTTP's bearer header goes through
 * (same tokens, JWT verifier, failed-attempt limit and audit line):
 * <ul>
 *   <li>{@code PLAIN}: the password is a Tierlog token or a JWT; the user name is not checked (any value).</li>
 *   <li>{@code OAUTHBEARER} (RFC 7628's client first message, as kafka-clients sends it): the bearer token is a JWT
 *   from the configured issuer, or a Tierlog token.</li>
 *   <li>{@code SCRAM-SHA-256}, {@code SCRAM-SHA-512}: a SCRAM user ({@link KafkaScram}), whose principal
 *   {@code scram:<user>} has the grants made to it (Kafka's ACLs on {@code User:<user>}); its two messages share
 *   the connection's exchange, and a wrong proof counts toward the same failed-attempt limit. With
 *   {@code tokenauth=true}, a Kafka delegation token ({@link KafkaDelegationTokens}) as its owner.</li>
 * </ul>
 * A session lasts {@link #SESSION_LIFETIME} (KIP-368: kafka-clients and librdkafka re-authenticate on the same
 * connection before it ends); a request after its end closes the connection, so a revoked or expired token stops
 * working on open connections within that time. Blocking (a JWT may need the issuer's keys): runs on a worker.
 */
final class KafkaSasl {
    static final List<String> MECHANISMS = List.of("PLAIN", "OAUTHBEARER", KafkaScram.MECHANISMS.get(0),
            KafkaScram.MECHANISMS.get(1));
    /** How long an authentication holds on a connection before the client must re-authenticate. */
    static final Duration SESSION_LIFETIME = Duration.ofMinutes(5);

    private final AccessControl access;
    private final KafkaScram scram;
    private final Clock clock;

    KafkaSasl(AccessControl access, KafkaScram scram, Clock clock) {
        this.access = access;
        this.scram = scram;
        this.clock = clock;
    }

    SaslHandshakeResponse handshake(SaslHandshakeRequest request, KafkaSession session) {
        SaslHandshakeResponseData out = new SaslHandshakeResponseData().setMechanisms(MECHANISMS);
        if (!access.tokenMode()) {
            return new SaslHandshakeResponse(out.setErrorCode(Errors.ILLEGAL_SASL_STATE.code()));
        }
        String mechanism = request.data().mechanism();
        if (!MECHANISMS.contains(mechanism)) {
            return new SaslHandshakeResponse(out.setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code()));
        }
        session.mechanism(mechanism);
        return new SaslHandshakeResponse(out);
    }

    SaslAuthenticateResponse authenticate(SaslAuthenticateRequest request, KafkaSession session, String clientId) {
        SaslAuthenticateResponseData out = new SaslAuthenticateResponseData().setAuthBytes(new byte[0]);
        String mechanism = session.mechanism();
        if (mechanism == null || !access.tokenMode()) {
            return new SaslAuthenticateResponse(out.setErrorCode(Errors.ILLEGAL_SASL_STATE.code())
                    .setErrorMessage("SaslHandshake first (mechanisms " + MECHANISMS + ")"));
        }
        if (KafkaScram.isScram(mechanism)) {
            return scramStep(request.data().authBytes(), session, "kafka SaslAuthenticate " + mechanism + " client="
                    + clientId, out);
        }
        Optional<String> token = "PLAIN".equals(mechanism) ? plainPassword(request.data().authBytes())
                : oauthBearerToken(request.data().authBytes());
        Optional<Principal> principal = token.flatMap(t -> access.authenticateToken(t, session.address(),
                "kafka SaslAuthenticate " + mechanism + " client=" + clientId));
        if (principal.isEmpty()) {
            // One answer for every refusal, as HTTP's 401: no oracle telling a bad token from a revoked one.
            return new SaslAuthenticateResponse(out.setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code())
                    .setErrorMessage("Authentication failed: invalid or expired token"));
        }
        return authenticated(session, principal.get(), out, "kafka SaslAuthenticate " + mechanism + " client="
                + clientId, SESSION_LIFETIME.toMillis(), false);
    }

    /**
     * The session as {@code principal} from now on, for {@code lifetimeMs} ({@link #SESSION_LIFETIME}, or less when a
     * delegation token expires sooner); refused, and the session ended,
     * when it re-authenticates (KIP-368) as another principal than it was, as Kafka refuses it: state kept per
     * principal on the connection (fetch and share sessions, quotas) must not change hands.
     */
    private SaslAuthenticateResponse authenticated(KafkaSession session, Principal principal,
                                                   SaslAuthenticateResponseData out, String request,
                                                   long lifetimeMs, boolean byDelegationToken) {
        Principal before = session.principal();
        if (session.saslAuthenticated() && before != null && !before.name().equals(principal.name())) {
            session.endSession();
            access.attemptFailed("principal-changed", session.address(), request);
            return new SaslAuthenticateResponse(out.setAuthBytes(new byte[0])
                    .setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code())
                    .setErrorMessage("Cannot change principals during re-authentication from " + before.name()
                            + ": " + principal.name()));
        }
        session.authenticated(principal, clock.millis() + lifetimeMs, byDelegationToken);
        return new SaslAuthenticateResponse(out.setSessionLifetimeMs(lifetimeMs));
    }

    /**
     * One message of a SCRAM exchange: the client's first gets the server's first (salt, iterations, nonce), the
     * client's final (its proof) the server's final (its signature) and, when the proof holds, the session. Any
     * failure ends the exchange with one answer, whatever failed.
     */
    private SaslAuthenticateResponse scramStep(byte[] message, KafkaSession session, String request,
                                               SaslAuthenticateResponseData out) {
        KafkaScram.Exchange exchange = session.saslExchange();
        if (exchange == null) {
            if (!access.mayAttempt(session.address(), request)) {
                return scramRefused(session, out);
            }
            exchange = scram.newExchange(session.mechanism());
            session.saslExchange(exchange);
        }
        byte[] reply;
        try {
            reply = exchange.server.evaluateResponse(message);
        } catch (SaslException | AuthenticationException e) {
            access.attemptFailed("bad-scram-credentials", session.address(), request);
            return scramRefused(session, out);
        }
        out.setAuthBytes(reply);
        if (!exchange.server.isComplete()) {
            return new SaslAuthenticateResponse(out);
        }
        session.saslExchange(null);
        DelegationTokenStore.Token token = exchange.token();
        if (token == null) {
            return authenticated(session, access.scramUser(exchange.server.getAuthorizationID()), out, request,
                    SESSION_LIFETIME.toMillis(), false);
        }
        // Revoked, or its owner token revoked, since the first message: refused as any other failure.
        Optional<Principal> owner = access.delegatedPrincipal(token);
        if (owner.isEmpty()) {
            access.attemptFailed("revoked-delegation-token", session.address(), request);
            return scramRefused(session, out);
        }
        long lifetime = Math.max(0, Math.min(SESSION_LIFETIME.toMillis(), token.expiresAt() - clock.millis()));
        return authenticated(session, owner.get(), out, request, lifetime, true);
    }

    private static SaslAuthenticateResponse scramRefused(KafkaSession session, SaslAuthenticateResponseData out) {
        session.saslExchange(null);
        // Kafka's own message, for an unknown user and a wrong password alike.
        return new SaslAuthenticateResponse(out.setAuthBytes(new byte[0])
                .setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code())
                .setErrorMessage("Authentication failed during authentication due to invalid credentials with SASL "
                        + "mechanism " + session.mechanism()));
    }

    /** RFC 4616: [authzid] NUL authcid NUL passwd. */
    static Optional<String> plainPassword(byte[] bytes) {
        String s = new String(bytes, StandardCharsets.UTF_8);
        String[] parts = s.split("\u0000", -1);
        if (parts.length != 3 || parts[2].isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(parts[2]);
    }

    /** RFC 7628 client first message: gs2-header, then kvpairs separated by ^A, one of them auth=Bearer token. */
    static Optional<String> oauthBearerToken(byte[] bytes) {
        String s = new String(bytes, StandardCharsets.UTF_8);
        for (String kv : s.split("\u0001")) {
            if (kv.startsWith("auth=")) {
                String value = kv.substring("auth=".length()).strip();
                if (value.regionMatches(true, 0, "Bearer ", 0, 7) && value.length() > 7) {
                    return Optional.of(value.substring(7).strip());
                }
            }
        }
        return Optional.empty();
    }
}
