package io.tierlog.service.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import io.quarkus.vertx.http.runtime.CurrentVertxRequest;
import io.tierlog.http.ProblemException;
import io.tierlog.http.ProblemType;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.format.CorruptLogException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import jakarta.inject.Inject;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The service's one exception mapper: every failure becomes an api.md problem+json. Contract errors
 * ({@link TierlogException}) keep their slug, status and extra fields; JAX-RS errors (unknown path 404, wrong
 * method 405, unsupported media type 415) and JSON parse errors (400 {@code bad-request} naming the field)
 * are translated; anything else is a 500 {@code internal-error} saying what failed, never where (no path: see
 * {@link io.tierlog.http.ServerErrorDetail}). Only 5xx are logged, at ERROR, since only they need a person
 * (not 503 {@code hot-tier-full}: backpressure); 4xx are the client's business and logged at DEBUG. A problem
 * carrying {@code retryAfterSeconds} (429, 503) also gets the {@code Retry-After} header. A failure because the
 * client hung up before its answer was written is the client's doing too: logged at DEBUG, nothing answered.
 */
@Provider
public final class ProblemMapper implements ExceptionMapper<Throwable> {
    private static final Logger LOG = Logger.getLogger(ProblemMapper.class);
    /** nginx's "client closed request": what the request's metrics record when nobody was left to answer. */
    static final int CLIENT_CLOSED_REQUEST = 499;

    private final CurrentVertxRequest current;

    @Inject
    public ProblemMapper(CurrentVertxRequest current) {
        this.current = current;
    }

    @Override
    public Response toResponse(Throwable thrown) {
        Throwable e = unwrap(thrown);
        RoutingContext ctx = current.getCurrent();
        if (ctx != null && hungUp(ctx.response(), e)) {
            LOG.debugf("client gone before its answer: %s", e);
            return Response.status(CLIENT_CLOSED_REQUEST).build();
        }
        Problem problem = toProblem(e);
        if (needsAPerson(problem)) {
            LOG.errorf(e, "request failed: %s", problem.detail());
        } else {
            LOG.debugf("request rejected: %s %s", problem.problemType().slug(), problem.detail());
        }
        Response.ResponseBuilder response = Response.status(problem.status()).type(Problem.MEDIA_TYPE)
                .entity(problem.toJson());
        problem.retryAfterSeconds().ifPresent(s -> response.header("Retry-After", s));
        return response.build();
    }

    /**
     * The same answer from a Vert.x route (streams and batch fetches write their own responses). Nothing is
     * written if the response has already begun or the client is gone.
     */
    public static void respond(HttpServerResponse response, Throwable thrown) {
        Throwable e = unwrap(thrown);
        if (hungUp(response, e)) {
            LOG.debugf("client gone before its answer: %s", e);
            return;
        }
        Problem problem = toProblem(e);
        if (needsAPerson(problem)) {
            LOG.errorf(e, "request failed: %s", problem.detail());
        }
        if (response.closed() || response.ended() || response.headWritten()) {
            return;
        }
        problem.retryAfterSeconds().ifPresent(s -> response.putHeader("Retry-After", Long.toString(s)));
        response.setStatusCode(problem.status()).putHeader("Content-Type", Problem.MEDIA_TYPE)
                .end(Buffer.buffer(problem.toJson()));
    }

    /**
     * Whether {@code e} is the write of an answer failing because its client hung up (or reset its stream): the
     * connection is closed and the failure is network I/O, not the volume's (a file-system error stays an error).
     */
    static boolean hungUp(HttpServerResponse response, Throwable e) {
        if (!response.closed()) {
            return false;
        }
        boolean io = false;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof FileSystemException) {
                return false;
            }
            io |= t instanceof IOException;
        }
        return io;
    }

    /**
     * A 5xx, except backpressure and stopping: 503 {@code hot-tier-full} and {@code service-stopping} are the
     * service working as designed ({@link io.tierlog.ingest.ProduceAdmission} logs each episode once at WARN).
     */
    private static boolean needsAPerson(Problem problem) {
        return problem.problemType().isServerError() && problem.type() != ProblemType.HOT_TIER_FULL
                && problem.type() != ProblemType.SERVICE_STOPPING;
    }

    /**
     * {@link #respond} once the request's body has been read and dropped: a server that answers and closes while
     * body bytes are still unread makes the kernel reset the connection, and the client may then lose the answer.
     */
    public static void respondAfterBody(io.vertx.ext.web.RoutingContext ctx, Throwable thrown) {
        io.vertx.core.http.HttpServerRequest request = ctx.request();
        if (request.isEnded()) {
            respond(ctx.response(), thrown);
            return;
        }
        request.handler(ignored -> { });
        request.exceptionHandler(ignored -> { });
        request.endHandler(v -> respond(ctx.response(), thrown));
        request.resume();
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    public static Problem toProblem(Throwable e) {
        if (e instanceof TierlogException t) {
            return Problem.of(t);
        }
        if (e instanceof ProblemException p) {
            return Problem.of(p);
        }
        if (e instanceof CorruptLogException c) {
            return Problem.of(ErrorType.CORRUPT_RECORD, c.getMessage());
        }
        JsonProcessingException json = jsonCause(e);
        if (json != null) {
            String field = json instanceof JsonMappingException m ? fieldPath(m) : "body";
            return new Problem(ProblemType.BAD_REQUEST, field + ": " + json.getOriginalMessage(), Map.of("field", field));
        }
        if (e instanceof WebApplicationException w) {
            int status = w.getResponse().getStatus();
            return new Problem(typeFor(status), w.getMessage() == null ? "HTTP " + status : w.getMessage(), Map.of());
        }
        return Problem.of(ErrorType.INTERNAL, describeFailure(e));
    }

    /**
     * What failed, for a 500: the exception's message and its root cause's kind (a file system's reason, such as
     * "File name too long", or the exception class). Paths in it are removed when the problem is rendered
     * ({@link io.tierlog.http.ServerErrorDetail}); the log keeps the whole exception.
     */
    static String describeFailure(Throwable e) {
        String what = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root == e) {
            return e.getMessage() == null ? what : e.getClass().getSimpleName() + ": " + what;
        }
        String why = root instanceof FileSystemException fs && fs.getReason() != null ? fs.getReason()
                : root.getClass().getSimpleName();
        return what + " (" + why + ")";
    }

    private static JsonProcessingException jsonCause(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof JsonProcessingException j) {
                return j;
            }
        }
        return null;
    }

    private static String fieldPath(JsonMappingException m) {
        StringBuilder sb = new StringBuilder();
        for (JsonMappingException.Reference r : m.getPath()) {
            if (r.getFieldName() != null) {
                if (!sb.isEmpty()) {
                    sb.append('.');
                }
                sb.append(r.getFieldName());
            } else if (r.getIndex() >= 0) {
                sb.append('[').append(r.getIndex()).append(']');
            }
        }
        return sb.isEmpty() ? "body" : sb.toString();
    }

    /** The contract type for a JAX-RS status; statuses the contract does not name fall back to 400 / 500. */
    private static ProblemType typeFor(int status) {
        return switch (status) {
            case 404 -> ProblemType.NOT_FOUND;
            case 405 -> ProblemType.METHOD_NOT_ALLOWED;
            case 413 -> ProblemType.REQUEST_TOO_LARGE;
            case 415 -> ProblemType.UNSUPPORTED_MEDIA_TYPE;
            default -> status >= 500 ? ProblemType.INTERNAL : ProblemType.BAD_REQUEST;
        };
    }
}
