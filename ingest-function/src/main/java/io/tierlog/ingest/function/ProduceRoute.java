package io.tierlog.ingest.function;

import io.tierlog.http.QueryParams;
import io.tierlog.http.MediaTypes;
import io.tierlog.http.ProblemException;
import io.tierlog.http.ProblemType;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The function's only route, {@code POST /v1/topics/{topic}/records}. The path is taken from {@code rawPath}
 * (else {@code requestContext.http.path}), less the stage prefix that a named stage adds; the topic from
 * {@code pathParameters.topic} when API Gateway matched the route, else from the decoded path segment. Any other
 * path is 404 {@code not-found}; the produce path with another method is 405 {@code method-not-allowed}
 * (with {@code Allow: POST}); a topic breaking Kafka's naming rule is 400 {@code invalid-topic}. A binary produce
 * also names its partition in the query ({@link #partitionOf}). Stateless.
 */
final class ProduceRoute {
    static final String ALLOWED_METHOD = "POST";
    private static final Pattern PRODUCE_PATH = Pattern.compile("/v1/topics/([^/]+)/records");

    private ProduceRoute() {
    }

    /** The valid topic name of a produce request, or the routing error. */
    static String topicOf(APIGatewayV2HTTPEvent event) {
        String path = withoutStage(path(event), stage(event));
        Matcher m = PRODUCE_PATH.matcher(path == null ? "" : path);
        if (!m.matches()) {
            throw new TierlogException(ErrorType.NOT_FOUND, "no route for " + shorten(path)
                    + "; this function serves POST /v1/topics/{topic}/records only");
        }
        String method = method(event);
        if (!ALLOWED_METHOD.equalsIgnoreCase(method)) {
            throw new ProblemException(ProblemType.METHOD_NOT_ALLOWED, "method " + method + " is not allowed on "
                    + shorten(path) + "; use POST", Map.of("allow", ALLOWED_METHOD));
        }
        Map<String, String> params = event.getPathParameters();
        String topic = params != null && params.get("topic") != null ? params.get("topic") : decode(m.group(1));
        return Names.requireValidTopic(topic);
    }

    /**
     * The {@code partition} query parameter that a {@value MediaTypes#RECORD_BATCHES} produce requires, read
     * from {@code queryStringParameters} (API Gateway has decoded it there, and joined a repeated parameter with
     * commas, which then fails as a non-integer). Parsed by {@link QueryParams#producePartition}, as the
     * index-service parses it: an integer in {@code [0, 2^31-1]}; otherwise 400 {@code bad-request} naming
     * {@code partition}.
     * Whether the topic has that partition is the ingest service's check (404 {@code unknown-partition}).
     */
    static int partitionOf(APIGatewayV2HTTPEvent event) {
        Map<String, String> query = event.getQueryStringParameters();
        return QueryParams.producePartition(query == null ? null : query.get("partition"));
    }

    private static String path(APIGatewayV2HTTPEvent event) {
        if (event.getRawPath() != null) {
            return event.getRawPath();
        }
        var ctx = event.getRequestContext();
        return ctx == null || ctx.getHttp() == null ? null : ctx.getHttp().getPath();
    }

    private static String method(APIGatewayV2HTTPEvent event) {
        var ctx = event.getRequestContext();
        return ctx == null || ctx.getHttp() == null ? null : ctx.getHttp().getMethod();
    }

    private static String stage(APIGatewayV2HTTPEvent event) {
        var ctx = event.getRequestContext();
        return ctx == null ? null : ctx.getStage();
    }

    /** A named stage prefixes rawPath with {@code /<stage>}; the {@code $default} stage adds nothing. */
    private static String withoutStage(String path, String stage) {
        if (path == null || stage == null || stage.isEmpty() || stage.equals("$default")) {
            return path;
        }
        String prefix = "/" + stage + "/";
        return path.startsWith(prefix) ? path.substring(prefix.length() - 1) : path;
    }

    /** Percent-decoding only: '+' is literal in a path; a malformed escape is left as is and fails the name rule. */
    private static String decode(String segment) {
        try {
            return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return segment;
        }
    }

    private static String shorten(String path) {
        if (path == null) {
            return "(no path)";
        }
        return path.length() > 200 ? path.substring(0, 200) + "…" : path;
    }
}
