package io.tierlog.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * The HTTP side of every client: the base URL, the bearer token (asked of the supplier for every request, so an
 * expiring JWT is replaced as soon as the supplier returns a new one), JSON in and out, problem documents turned
 * into {@link ProblemException}, and retries of calls that are safe to repeat. Thread-safe; one JDK
 * {@link HttpClient} (HTTP/1.1 keep-alive pool) per transport.
 */
public final class HttpTransport {
    static final ObjectMapper JSON = new ObjectMapper()
            .configure(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    static final String JSON_TYPE = "application/json";
    static final String BATCHES_TYPE = "application/vnd.tierlog.record-batches";

    private final URI base;
    private final Supplier<String> token;
    private final HttpClient http;
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final Backoff backoff;
    private final int maxRetries;

    HttpTransport(URI base, Supplier<String> token, Duration connectTimeout, Duration requestTimeout, Backoff backoff,
                  int maxRetries) {
        String s = base.toString();
        this.base = URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
        this.token = token;
        // HTTP/1.1: the service's produce and fetch routes are tuned for it, and h2c upgrade costs a round trip.
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(connectTimeout).build();
        this.connectTimeout = connectTimeout;
        this.requestTimeout = requestTimeout;
        this.backoff = backoff;
        this.maxRetries = maxRetries;
    }

    public URI base() {
        return base;
    }

    Backoff backoff() {
        return backoff;
    }

    HttpClient http() {
        return http;
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    /** A request to {@code pathAndQuery} (starting with "/") with the bearer token, if any, and the default timeout. */
    HttpRequest.Builder request(String pathAndQuery) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + pathAndQuery)).timeout(requestTimeout);
        String authorization = authorization();
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return b;
    }

    /** {@code Bearer <token>} from the supplier now, or null without a token. */
    private String authorization() {
        if (token == null) {
            return null;
        }
        String t = token.get();
        return t == null || t.isEmpty() ? null : "Bearer " + t;
    }

    /**
     * A produce or fetch exchange on a blocking connection ({@link BlockingExchange}: why), on the calling thread, with
     * the bearer token. Not retried here. {@code readTimeout}: the longest silence of the service (the request
     * timeout plus a fetch's long-poll).
     *
     * @throws IOException when there was no (whole) answer
     */
    BlockingExchange.Answer exchange(String method, String pathAndQuery, String accept, String contentType, byte[] body,
                                     Duration readTimeout) throws IOException {
        return exchange(method, pathAndQuery, accept, contentType, body, body == null ? 0 : body.length, readTimeout);
    }

    /** As {@link #exchange(String, String, String, String, byte[], Duration)} with the body {@code body[0, length)}. */
    BlockingExchange.Answer exchange(String method, String pathAndQuery, String accept, String contentType, byte[] body,
                                     int length, Duration readTimeout) throws IOException {
        return BlockingExchange.exchange(URI.create(base + pathAndQuery), method, authorization(), accept, contentType,
                body, length, (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()),
                (int) Math.min(Integer.MAX_VALUE, Math.max(1, readTimeout.toMillis())));
    }

    /**
     * A JSON call. {@code body} null: no body. Retried after {@link Backoff} on 429 and 503 (refused before it ran,
     * honouring {@code Retry-After}) and, when {@code idempotent}, also on other 5xx and on no answer at all.
     *
     * @return the parsed answer, or null for an empty body (204)
     * @throws ProblemException for an error answer that is not retried (or the last one)
     * @throws UnavailableException when the service could not be reached
     */
    public JsonNode call(String method, String pathAndQuery, Object body, boolean idempotent) {
        return call(method, pathAndQuery, body, idempotent, maxRetries, requestTimeout);
    }

    /**
     * {@link #call(String, String, Object, boolean)} with at most {@code retries} retries (0: one attempt), each
     * attempt given up after {@code timeout}.
     */
    JsonNode call(String method, String pathAndQuery, Object body, boolean idempotent, int retries, Duration timeout) {
        byte[] bytes = body == null ? null : toJson(body);
        for (int attempt = 0; ; attempt++) {
            HttpRequest.Builder b = request(pathAndQuery).timeout(timeout).header("Accept", JSON_TYPE);
            if (bytes == null) {
                b.method(method, HttpRequest.BodyPublishers.noBody());
            } else {
                b.header("Content-Type", JSON_TYPE).method(method, HttpRequest.BodyPublishers.ofByteArray(bytes));
            }
            long retryAfter = -1;
            RuntimeException failure;
            try {
                HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() < 300) {
                    return r.body().length == 0 ? null : JSON.readTree(r.body());
                }
                ProblemException p = problem(r);
                if (!(p.status() == 429 || p.status() == 503 || (idempotent && p.retriable()))) {
                    throw p;
                }
                failure = p;
                retryAfter = p.retryAfterSeconds().orElse(-1);
            } catch (IOException e) {
                failure = new UnavailableException(method + " " + base + pathAndQuery + ": " + describe(e), e);
                if (!idempotent) {
                    throw failure;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TierlogException("interrupted", e);
            }
            if (attempt >= retries) {
                throw failure;
            }
            sleep(backoff.delayMillis(attempt, retryAfter));
        }
    }

    /** A GET of JSON, retried. */
    public JsonNode get(String pathAndQuery) {
        return call("GET", pathAndQuery, null, true);
    }

    static byte[] toJson(Object body) {
        try {
            return body instanceof byte[] raw ? raw : JSON.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not serialisable as JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** The problem of an error answer; a body that is not a problem document becomes type {@code http-<status>}. */
    static ProblemException problem(HttpResponse<byte[]> r) {
        return problem(r.statusCode(), r.body(), retryAfterSeconds(r.headers().firstValue("Retry-After").orElse(null)));
    }

    /** The problem of an error answer of a {@link BlockingExchange}. */
    static ProblemException problem(BlockingExchange.Answer a) {
        return problem(a.status(), a.body(), retryAfterSeconds(a.retryAfter()));
    }

    private static ProblemException problem(int status, byte[] raw, long retryAfter) {
        JsonNode body = null;
        try {
            if (raw != null && raw.length > 0) {
                body = JSON.readTree(raw);
            }
        } catch (IOException notJson) {
            body = null;
        }
        if (body == null || !body.isObject()) {
            String text = raw == null ? "" : new String(raw, StandardCharsets.UTF_8);
            return new ProblemException(status, "http-" + status, "HTTP " + status,
                    text.length() > 200 ? text.substring(0, 200) : text, null, retryAfter);
        }
        return new ProblemException(status, body.path("type").asText("http-" + status),
                body.path("title").asText(""), body.path("detail").asText(""), body, retryAfter);
    }

    /**
     * A {@code Retry-After} value in seconds (only the delta-seconds form, the one the service sends); -1 when absent
     * (null).
     */
    static long retryAfterSeconds(String header) {
        if (header == null) {
            return -1;
        }
        try {
            return Math.max(0, Long.parseLong(header.trim()));
        } catch (NumberFormatException httpDate) {
            return 1; // an HTTP-date: not sent by Tierlog; wait a little rather than not at all
        }
    }

    static String describe(Throwable e) {
        Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TierlogException("interrupted", e);
        }
    }
}
