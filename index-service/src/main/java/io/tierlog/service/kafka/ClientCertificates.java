package io.tierlog.service.kafka;

import io.tierlog.access.InvalidScopeException;
import io.tierlog.access.GrantStore;
import io.tierlog.access.Principal;
import io.tierlog.access.Scopes;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.net.NetSocket;
import org.jboss.logging.Logger;

import javax.net.ssl.SSLPeerUnverifiedException;
import javax.security.auth.x500.X500Principal;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Client certificates as identities (mutual TLS, Kafka's {@code ssl.client.auth}): the TLS handshake has verified the
 * client's certificate against the configured CA, and its subject, a distinguished name, is looked up among
 * {@code tierlog.kafka.tls-client-scopes}. A subject found there makes the connection the principal
 * {@code cert:<subject>} with those scopes, authenticated without SASL, as Kafka's SSL listener takes the certificate's
 * subject as the principal; a subject not there authenticates nothing, and the connection uses SASL as any other.
 * Subjects are compared in the canonical form of RFC 2253 (case and spacing do not matter). Immutable; thread-safe.
 */
final class ClientCertificates {
    private static final Logger LOG = Logger.getLogger(ClientCertificates.class);
    static final ClientCertificates NONE = new ClientCertificates(Map.of());
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Map<String, Scopes> scopesBySubject;

    private ClientCertificates(Map<String, Scopes> scopesBySubject) {
        this.scopesBySubject = scopesBySubject;
    }

    /**
     * From the configured subject-to-scopes map and its JSON form ({@code tierlog.kafka.tls-client-scopes-json});
     * throws naming the entry that is not a subject or not scopes, or JSON that is not an object of strings.
     */
    static ClientCertificates of(Map<String, String> scopesBySubject, Optional<String> json) {
        Map<String, String> all = new HashMap<>(scopesBySubject);
        if (json.isPresent() && !json.get().isBlank()) {
            Map<String, String> fromJson;
            try {
                fromJson = JSON.readValue(json.get(), new TypeReference<Map<String, String>>() { });
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("tierlog.kafka.tls-client-scopes-json must be a JSON object of "
                        + "subject to scopes strings, e.g. {\"CN=orders-app,O=Acme\": \"produce:topic:orders*\"}");
            }
            fromJson.forEach((subject, scopes) -> {
                if (all.putIfAbsent(subject, scopes) != null) {
                    throw new IllegalStateException("tierlog.kafka.tls-client-scopes and -json both name " + subject);
                }
            });
        }
        Map<String, Scopes> out = new HashMap<>();
        all.forEach((subject, scopes) -> {
            String key = canonical(subject);
            if (scopes == null) {
                throw new IllegalStateException("tierlog.kafka.tls-client-scopes.\"" + subject + "\": no scopes");
            }
            try {
                if (out.put(key, Scopes.parse(scopes)) != null) {
                    throw new IllegalStateException("tierlog.kafka.tls-client-scopes names " + subject + " twice");
                }
            } catch (InvalidScopeException e) {
                throw new IllegalStateException("tierlog.kafka.tls-client-scopes.\"" + subject + "\": " + e.getMessage());
            }
        });
        return new ClientCertificates(Map.copyOf(out));
    }

    /** Whether any subject has scopes. */
    boolean any() {
        return !scopesBySubject.isEmpty();
    }

    private static String canonical(String subject) {
        try {
            return new X500Principal(subject).getName(X500Principal.CANONICAL);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("tierlog.kafka.tls-client-scopes: \"" + subject
                    + "\" is not a distinguished name (e.g. CN=orders-app,O=Acme)");
        }
    }

    /** The scopes listed for a certificate subject, or null. */
    Scopes scopesOf(X500Principal subject) {
        return scopesBySubject.get(subject.getName(X500Principal.CANONICAL));
    }

    /**
     * The principal of a TLS connection whose client presented a known certificate, with the grants to its name;
     * else {@code otherwise}.
     */
    Principal principal(NetSocket socket, Principal otherwise, GrantStore grants) {
        if (scopesBySubject.isEmpty() || !socket.isSsl()) {
            return otherwise;
        }
        List<Certificate> chain;
        try {
            chain = socket.peerCertificates();
        } catch (SSLPeerUnverifiedException noCertificate) {
            return otherwise;
        }
        if (chain == null || chain.isEmpty() || !(chain.get(0) instanceof X509Certificate leaf)) {
            return otherwise;
        }
        X500Principal subject = leaf.getSubjectX500Principal();
        Scopes scopes = scopesOf(subject);
        if (scopes == null) {
            LOG.debugf("Kafka connection %s: certificate %s has no scopes (tierlog.kafka.tls-client-scopes)",
                    socket.remoteAddress(), subject.getName());
            return otherwise;
        }
        return new Principal("cert:" + subject.getName(), scopes, grants);
    }
}
