package io.tierlog.service.kafka;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.tierlog.access.GrantStore;
import io.tierlog.access.Principal;
import io.tierlog.service.PooledDirectMemory;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.quota.Quotas;
import io.tierlog.service.quota.RateQuota;
import io.tierlog.service.security.AccessControl;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.core.http.ClientAuth;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The Kafka wire-protocol listener (docs/kafka.md, ADR 0013): a Vert.x TCP server on {@code tierlog.kafka.port}
 * whose connections are each a {@link KafkaConnection}, all answered by one {@link KafkaApis}.
 *
 * <p>Opened on startup when {@code tierlog.kafka.enabled} (a bind failure fails the start, as the HTTP port's does),
 * closed first thing on shutdown so that no new request reaches the engine while it stops.
 */
@Singleton
public class KafkaListener {
    private static final Logger LOG = Logger.getLogger(KafkaListener.class);

    private final Vertx vertx;
    private final KafkaApis apis;
    private final PooledDirectMemory memory;
    private final RateQuota connectionRates;
    private final GrantStore grants;
    private final TierlogConfig.Kafka config;
    private final TierlogConfig.Auth auth;
    private final java.nio.file.Path brokersDir;
    private final Duration maxClockSkew;
    private final Clock clock;
    private final String host;
    private volatile NetServer server;
    private volatile BrokerRegistry brokers;

    public KafkaListener(Vertx vertx, KafkaApis apis, TierlogConfig config, Clock clock, PooledDirectMemory memory,
                         AccessControl access, Quotas quotas) {
        this.vertx = vertx;
        this.connectionRates = quotas.connections();
        this.grants = access.grants();
        this.memory = memory;
        this.clock = clock;
        this.brokersDir = config.dataDir().resolve("__metadata").resolve("kafka-brokers");
        this.maxClockSkew = config.groups().maxClockSkew();
        this.apis = apis;
        this.config = config.kafka();
        this.auth = config.auth();
        this.host = this.config.host().orElseGet(() -> ConfigProvider.getConfig()
                .getOptionalValue("quarkus.http.host", String.class).orElse("0.0.0.0"));
    }

    void start(@Observes StartupEvent event) throws Exception {
        if (!config.enabled()) {
            LOG.info("Kafka listener disabled (tierlog.kafka.enabled=false)");
            return;
        }
        boolean tokenMode = "token".equalsIgnoreCase(auth.mode());
        if (!tokenMode && !auth.allowAnonymous() && !AccessControl.loopback(host)) {
            throw new IllegalStateException("tierlog.auth.mode=none with the Kafka listener on non-loopback address "
                    + host + ": set tierlog.kafka.enabled=false, bind it to loopback (tierlog.kafka.host), or set "
                    + "tierlog.auth.allow-anonymous=true to let anyone who reaches it use the service");
        }
        NetServerOptions options = options();
        PfxOptions keystore = keystore();
        ClientCertificates certificates = ClientCertificates.of(config.tlsClientScopes(), config.tlsClientScopesJson());
        ClientAuth clientAuth = clientAuth(keystore != null, certificates.any());
        if (keystore != null) {
            // TLS 1.2 and 1.3 only (Vert.x' default protocols), the JDK's engine.
            options.setSsl(true).setKeyCertOptions(keystore).setClientAuth(clientAuth);
            if (clientAuth != ClientAuth.NONE) {
                options.setTrustOptions(clientCa());
            }
        }
        NetServer s = vertx.createNetServer(options);
        // In token mode a connection is no one until it authenticates (a known client certificate, or SASL); in none
        // mode it is anonymous.
        Principal before = tokenMode ? null : Principal.ANONYMOUS;
        ClientCertificates known = tokenMode ? certificates : ClientCertificates.NONE;
        s.connectHandler(socket -> {
            long throttleMs = connectionThrottleMs(socket);
            if (throttleMs > 0) {
                // Kafka's answer to an address over its connection_creation_rate (KIP-612): nothing is read, and the
                // connection is closed once the address is back within its rate, so a reconnecting client slows down.
                socket.pause();
                vertx.setTimer(throttleMs, t -> socket.close());
                return;
            }
            new KafkaConnection(socket, apis, config.maxRequestBytes(), known.principal(socket, before, grants),
                    memory).start();
        });
        server = s.listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        EcsTaskMetadata ecs = config.advertisedHost().isPresent() && config.rack().isPresent() ? EcsTaskMetadata.NONE
                : EcsTaskMetadata.read(System.getenv(EcsTaskMetadata.ENDPOINT_VARIABLE));
        BrokerRegistry registry = BrokerRegistry.join(brokersDir, advertisedHost(ecs), server.actualPort(),
                config.rack().or(ecs::zone).orElse(null), clock, config.brokerLiveness(), maxClockSkew);
        brokers = registry;
        apis.serveAs(registry::cluster);
        Broker broker = registry.self();
        LOG.infof("Kafka listener on %s:%d, advertised as node %d at %s:%d in rack %s, %s, %s", host,
                server.actualPort(), broker.nodeId(), broker.host(), broker.port(), broker.rack(),
                tokenMode ? "SASL (PLAIN, OAUTHBEARER) with Tierlog tokens" : "unauthenticated",
                keystore == null ? "plaintext" : clientAuth == ClientAuth.NONE ? "TLS"
                        : "TLS with client certificates " + clientAuth.name().toLowerCase(java.util.Locale.ROOT));
    }

    /**
     * How long a new connection is held before it is closed, its address being over the connection rate set for it
     * (an ip entity's {@code connection_creation_rate}); 0: it is served, and counted.
     */
    private long connectionThrottleMs(NetSocket socket) {
        SocketAddress remote = socket.remoteAddress();
        String address = remote == null ? null : remote.hostAddress();
        if (address == null || connectionRates.perSecond(address) <= 0) {
            return 0;
        }
        long debtMs = connectionRates.debtMillis(address);
        if (debtMs > 0) {
            LOG.debugf("connection from %s throttled for %d ms (connection_creation_rate)", address, debtMs);
            return debtMs;
        }
        connectionRates.record(address, 1);
        return 0;
    }

    /** The listener's socket options (TLS aside): its address, no Nagle delay, the configured send buffer. */
    NetServerOptions options() {
        NetServerOptions options = new NetServerOptions().setHost(host).setPort(config.port()).setTcpNoDelay(true);
        if (config.socketSendBufferBytes() > 0) {
            options.setSendBufferSize(config.socketSendBufferBytes());
        }
        return options;
    }

    void stop(@Observes ShutdownEvent event) {
        BrokerRegistry registry = brokers;
        if (registry != null) {
            registry.close(); // the others stop advertising this instance at their next refresh
        }
        NetServer s = server;
        if (s != null) {
            server = null;
            try {
                s.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.debugf(e, "closing the Kafka listener");
            }
        }
    }

    /** The port the listener is bound to (for tests that bind port 0); -1 when it is not open. */
    public int port() {
        NetServer s = server;
        return s == null ? -1 : s.actualPort();
    }

    /** This instance as Metadata describes it; null until the listener is open. */
    public Broker broker() {
        BrokerRegistry registry = brokers;
        return registry == null ? null : registry.self();
    }

    /** The listener's keystore, from a file or from base64 text; null: plaintext. */
    private PfxOptions keystore() {
        String password = config.tlsKeystorePassword().orElse("");
        if (config.tlsKeystore().isPresent()) {
            java.nio.file.Path keystore = config.tlsKeystore().get();
            if (!java.nio.file.Files.isReadable(keystore)) {
                throw new IllegalStateException("tierlog.kafka.tls-keystore: cannot read " + keystore);
            }
            return new PfxOptions().setPath(keystore.toString()).setPassword(password);
        }
        if (config.tlsKeystoreBase64().isPresent()) {
            byte[] bytes;
            try {
                bytes = java.util.Base64.getMimeDecoder().decode(config.tlsKeystoreBase64().get().strip());
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException("tierlog.kafka.tls-keystore-base64 is not base64");
            }
            return new PfxOptions().setValue(io.vertx.core.buffer.Buffer.buffer(bytes)).setPassword(password);
        }
        return null;
    }

    /** {@code tierlog.kafka.tls-client-auth}, checked against the rest of the TLS settings. */
    private ClientAuth clientAuth(boolean tls, boolean scopesListed) {
        ClientAuth auth = switch (config.tlsClientAuth().strip().toLowerCase(java.util.Locale.ROOT)) {
            case "none" -> ClientAuth.NONE;
            case "requested" -> ClientAuth.REQUEST;
            case "required" -> ClientAuth.REQUIRED;
            default -> throw new IllegalStateException("tierlog.kafka.tls-client-auth must be none, requested or "
                    + "required, not " + config.tlsClientAuth());
        };
        if (auth != ClientAuth.NONE && !tls) {
            throw new IllegalStateException("tierlog.kafka.tls-client-auth=" + config.tlsClientAuth()
                    + " needs TLS: set tierlog.kafka.tls-keystore");
        }
        if (auth != ClientAuth.NONE && config.tlsClientCa().isEmpty() && config.tlsClientCaPem().isEmpty()) {
            throw new IllegalStateException("tierlog.kafka.tls-client-auth=" + config.tlsClientAuth()
                    + " needs the CA that signs client certificates: tierlog.kafka.tls-client-ca");
        }
        if (auth == ClientAuth.NONE && scopesListed) {
            throw new IllegalStateException("tierlog.kafka.tls-client-scopes is set but no client certificate is "
                    + "asked for: set tierlog.kafka.tls-client-auth to requested or required");
        }
        return auth;
    }

    /** The CA certificates client certificates must chain to, from a PEM file or PEM text. */
    private PemTrustOptions clientCa() {
        if (config.tlsClientCa().isPresent()) {
            java.nio.file.Path ca = config.tlsClientCa().get();
            if (!java.nio.file.Files.isReadable(ca)) {
                throw new IllegalStateException("tierlog.kafka.tls-client-ca: cannot read " + ca);
            }
            return new PemTrustOptions().addCertPath(ca.toString());
        }
        return new PemTrustOptions().addCertValue(io.vertx.core.buffer.Buffer.buffer(config.tlsClientCaPem().get()));
    }

    /** The configured host, else the ECS task's address, else the bind host, else this machine's name. */
    private String advertisedHost(EcsTaskMetadata ecs) {
        if (config.advertisedHost().isPresent()) {
            return config.advertisedHost().get();
        }
        if (ecs.host().isPresent()) {
            return ecs.host().get();
        }
        if (!"0.0.0.0".equals(host) && !"::".equals(host)) {
            return host;
        }
        try {
            return InetAddress.getLocalHost().getCanonicalHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }
}
