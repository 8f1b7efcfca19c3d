package io.tierlog.client;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Where the service is and who calls it; the factory of {@link Producer}, {@link Consumer}, {@link ShareConsumer} and
 * {@link Admin}, which share its HTTP connection pool.
 *
 * <pre>{@code
 * TierlogClient client = TierlogClient.builder().url("https://tierlog.example.com").token(System.getenv("TIERLOG_TOKEN")).build();
 * }</pre>
 *
 * Immutable and thread-safe. It holds no threads; the producers and consumers it makes do, and are closed by their
 * owners.
 */
public final class TierlogClient {
    private final HttpTransport transport;

    private TierlogClient(HttpTransport transport) {
        this.transport = transport;
    }

    public static Builder builder() {
        return new Builder();
    }

    public HttpTransport transport() {
        return transport;
    }

    public Admin admin() {
        return new Admin(transport);
    }

    public Producer producer(ProducerConfig config) {
        return new Producer(transport, config);
    }

    public Consumer consumer(ConsumerConfig config) {
        return new Consumer(transport, config);
    }

    public ShareConsumer shareConsumer(String group, String topic) {
        return new ShareConsumer(transport, group, topic);
    }

    public static final class Builder {
        private URI url = URI.create("http://localhost:8080");
        private Supplier<String> token;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration requestTimeout = Duration.ofSeconds(60);
        private Backoff backoff = Backoff.DEFAULT;
        private int maxRetries = 5;

        public Builder url(String url) {
            this.url = URI.create(Objects.requireNonNull(url, "url"));
            return this;
        }

        /** A static token (minted, or the bootstrap token); null or empty: no Authorization header. */
        public Builder token(String token) {
            this.token = token == null ? null : () -> token;
            return this;
        }

        /**
         * Asked for a token before every request: for JWTs that expire, return the current one (cache it and
         * refresh it shortly before its {@code exp}; the supplier must be fast and thread-safe).
         */
        public Builder tokenSupplier(Supplier<String> supplier) {
            this.token = supplier;
            return this;
        }

        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        /** Per request; a long-poll's {@code waitMs} is added to it. */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = timeout;
            return this;
        }

        /** Backoff of admin and fetch calls (the producer has its own, {@link ProducerConfig}). */
        public Builder backoff(Backoff backoff) {
            this.backoff = backoff;
            return this;
        }

        /** Retries of admin and fetch calls that failed in a retriable way (default 5; 0: none). */
        public Builder maxRetries(int retries) {
            this.maxRetries = retries;
            return this;
        }

        public TierlogClient build() {
            return new TierlogClient(new HttpTransport(url, token, connectTimeout, requestTimeout, backoff, maxRetries));
        }
    }
}
