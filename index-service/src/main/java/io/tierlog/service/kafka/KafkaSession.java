package io.tierlog.service.kafka;

import io.tierlog.access.Principal;


import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * What the listener keeps about one client connection beyond its framing: who it is (SASL), the order of its
 * produce requests and how long its reads are to pause for a quota ({@link #throttle}).
 *
 * <p>Kafka appends a connection's produce requests in the order they were sent (its broker handles one request of a
 * connection at a time), and an idempotent producer with several requests in flight relies on it: its batches carry
 * consecutive sequences, and one appended before its predecessor would be OUT_OF_ORDER_SEQUENCE_NUMBER. So a
 * connection's produce requests run one after the other ({@link #inProduceOrder}); other requests stay pipelined.
 *
 * <p>The produce chain is touched on the connection's event loop only (where {@link KafkaApis#handle} is called);
 * the principal is written there after a SaslAuthenticate and read by request handlers on pool threads (volatile).
 */
final class KafkaSession {
    private final String address;
    private final int port;
    /** What the client said it is in ApiVersions (KIP-511), for client-metrics subscriptions; null until then. */
    private volatile String softwareName;
    private volatile String softwareVersion;
    private CompletableFuture<?> lastProduce = CompletableFuture.completedFuture(null);
    private volatile Principal principal;
    private volatile long authenticatedUntilMs = Long.MAX_VALUE;
    private volatile String mechanism;
    private volatile boolean byDelegationToken;
    /** A multi-step SASL exchange under way (SCRAM's two messages), or null. */
    private volatile KafkaScram.Exchange saslExchange;
    private final boolean fileSlices;
    /** How long to stop reading from the connection once the current answers are written (quota throttle), ms. */
    private final AtomicLong pendingMuteMs = new AtomicLong();

    /**
     * @param principal  who the connection is before any SASL exchange: anonymous in auth mode none, else null
     * @param fileSlices whether the socket can send file ranges as they are ({@code sendfile}: plaintext, not TLS)
     */
    KafkaSession(String address, int port, Principal principal, boolean fileSlices) {
        this.address = address;
        this.port = port;
        this.principal = principal == null ? null : principal.at(address);
        this.fileSlices = fileSlices;
    }

    /** Whether fetched hot batches may be answered as file ranges (ADR 0037); false on a TLS connection. */
    boolean fileSlices() {
        return fileSlices;
    }

    /** Starts {@code produce} once this connection's previous produce request is answered (or failed). */
    <T> CompletableFuture<T> inProduceOrder(Supplier<CompletableFuture<T>> produce) {
        CompletableFuture<T> next = lastProduce.handle((r, e) -> null).thenCompose(v -> produce.get());
        lastProduce = next;
        return next;
    }

    String address() {
        return address;
    }

    int port() {
        return port;
    }

    /** Records the client's software name and version from its ApiVersions request (either may be empty). */
    void clientSoftware(String name, String version) {
        this.softwareName = name;
        this.softwareVersion = version;
    }

    String softwareName() {
        return softwareName;
    }

    String softwareVersion() {
        return softwareVersion;
    }

    /** The authenticated caller, or null before a successful SASL exchange (token mode). */
    Principal principal() {
        return principal;
    }

    /** When the SASL session ends (KIP-368): a request after it closes the connection unless re-authenticated. */
    long authenticatedUntilMs() {
        return authenticatedUntilMs;
    }

    /** Whether a SASL exchange authenticated this connection (so a new one is a re-authentication, KIP-368). */
    boolean saslAuthenticated() {
        return authenticatedUntilMs != Long.MAX_VALUE;
    }

    /** Ends the SASL session now: the next request other than ApiVersions and SASL closes the connection. */
    void endSession() {
        this.authenticatedUntilMs = Long.MIN_VALUE;
    }

    /**
     * The connection's caller from now on, as calling from its address (a grant may be made for one host).
     *
     * @param byDelegationToken whether a Kafka delegation token authenticated it (it may then not manage tokens)
     */
    void authenticated(Principal principal, long untilMs, boolean byDelegationToken) {
        this.principal = principal.at(address);
        this.authenticatedUntilMs = untilMs;
        this.byDelegationToken = byDelegationToken;
    }

    /** Whether a Kafka delegation token authenticated this connection. */
    boolean byDelegationToken() {
        return byDelegationToken;
    }

    /**
     * Asks the connection to stop reading for {@code ms} after it writes its pending answers (Kafka's throttling of a
     * caller over its quota, KIP-219); the longest of several asks wins. Any thread.
     */
    void throttle(long ms) {
        if (ms > 0) {
            pendingMuteMs.accumulateAndGet(ms, Math::max);
        }
    }

    /** The throttle asked for since the last call, 0 if none; resets it. */
    long takeThrottle() {
        return pendingMuteMs.getAndSet(0);
    }

    /** The mechanism SaslHandshake chose, or null before one. */
    String mechanism() {
        return mechanism;
    }

    /** Starts a SASL exchange with {@code mechanism}, dropping any exchange left unfinished. */
    void mechanism(String mechanism) {
        this.mechanism = mechanism;
        this.saslExchange = null;
    }

    /** The SASL exchange under way, or null before its first message and after its last. */
    KafkaScram.Exchange saslExchange() {
        return saslExchange;
    }

    void saslExchange(KafkaScram.Exchange exchange) {
        this.saslExchange = exchange;
    }
}
