package io.tierlog.service.metrics;

import io.micrometer.core.instrument.config.MeterFilter;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Keeps the {@code uri} tag of the HTTP server's meters to the API's routes. Quarkus tags a request with its route's
 * template, but a request answered before routing (401 without a token, 405, 415) carries its raw path, so every
 * topic or group name a client tries would be a tag value of its own: unbounded series, and once Micrometer's cap
 * (100 values) is reached, the meters of routes not seen yet are dropped. A raw {@code /v1} path is tagged with the
 * route it names, else {@value #UNMATCHED}; Quarkus's own values (templates, {@code NOT_FOUND}, {@code REDIRECTION},
 * the management paths under {@code /q}, which answer without a token) are kept.
 */
@Singleton
public final class HttpUriTags {
    static final String UNMATCHED = "UNMATCHED";
    /** The API's routes, as docs/api.md and {@code /q/openapi} list them (HttpUriTagsTest compares the two). */
    public static final List<String> ROUTES = List.of(
            "/v1/topics", "/v1/topics/{topic}", "/v1/topics/{topic}/config", "/v1/topics/{topic}/records",
            "/v1/topics/{topic}/keys/{key}", "/v1/topics/{topic}/partitions/{partition}/records",
            "/v1/topics/{topic}/partitions/{partition}/offsets", "/v1/topics/{topic}/partitions/{partition}/stream",
            "/v1/groups", "/v1/groups/{group}", "/v1/groups/{group}/heartbeat", "/v1/groups/{group}/lag",
            "/v1/groups/{group}/offsets", "/v1/groups/{group}/offsets/reset",
            "/v1/share-groups/{group}", "/v1/share-groups/{group}/config",
            "/v1/share-groups/{group}/topics/{topic}/acks", "/v1/share-groups/{group}/topics/{topic}/lease",
            "/v1/tokens", "/v1/tokens/{id}");
    private static final List<Pattern> PATTERNS = ROUTES.stream()
            .map(r -> Pattern.compile(r.replaceAll("\\{[^}]+}", "[^/]+"))).toList();

    /** The {@code uri} tag a value stands for. */
    static String tag(String uri) {
        if (uri == null || !uri.startsWith("/v1") || uri.contains("{")) {
            return uri;
        }
        for (int i = 0; i < ROUTES.size(); i++) {
            if (PATTERNS.get(i).matcher(uri).matches()) {
                return ROUTES.get(i);
            }
        }
        return UNMATCHED;
    }

    @Produces
    @Singleton
    MeterFilter boundedUriTags() {
        return MeterFilter.replaceTagValues("uri", HttpUriTags::tag);
    }
}
