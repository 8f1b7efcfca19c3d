package io.tierlog.service.keys;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.tierlog.http.Encoding;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.api.PartitionRequests;
import io.tierlog.service.api.RecordJson;
import io.tierlog.service.http.Requests;
import io.tierlog.service.http.doc.ApiSchemas;
import io.tierlog.service.http.doc.ProblemResponses;
import io.tierlog.service.read.FetchResult;
import io.tierlog.service.read.PartitionReads;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;

/**
 * The latest value of a key (api.md, "Compaction and keys"): the index's key entries name the offset of each key's
 * latest record per partition ({@code io.tierlog.index.LogIndex}); the record is read back through the tier router,
 * as a fetch at that offset would. Every partition is asked (one RocksDB get each), since a producer may place a
 * key anywhere; if several hold it, the record with the largest timestamp wins.
 */
@Path("/v1/topics/{topic}/keys")
@Tag(name = "records")
public class KeysResource {
    private static final JsonFactory FACTORY = new JsonFactory();

    private final TopicStore topics;
    private final PartitionReads reads;
    private final ExecutorService readPool;

    public KeysResource(TopicStore topics, PartitionReads reads, ServiceThreads threads) {
        this.topics = topics;
        this.reads = reads;
        this.readPool = threads.reads();
    }

    @GET
    @Path("{key}")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "The latest record of a key", description = "The key is URL-encoded UTF-8, or with "
            + "?keyEncoding=base64 base64url bytes (padded or not). 200: the key's latest record as in fetch, with "
            + "topic and partition; encoding json|base64 as in fetch. 404 unknown-key when no record has the key or "
            + "its latest is a tombstone. Reflects an acknowledged produce at once.")
    @APIResponse(responseCode = "200", description = "The key's latest record",
            content = @Content(mediaType = MediaType.APPLICATION_JSON,
                    schema = @Schema(implementation = ApiSchemas.KeyRecord.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_KEY)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    @APIResponse(responseCode = "503", ref = ProblemResponses.COLD_TIER_UNAVAILABLE)
    public CompletionStage<Response> latest(@PathParam("topic") String topic, @PathParam("key") String key,
                                            @QueryParam("keyEncoding") String keyEncoding,
                                            @QueryParam("encoding") String encodingParam) {
        byte[] keyBytes = keyBytes(key, keyEncoding);
        Encoding encoding = PartitionRequests.encoding(encodingParam);
        return CompletableFuture.supplyAsync(() -> {
            TopicMetadata t = topics.get(topic);
            Found best = null;
            for (int p = 0; p < t.partitions(); p++) {
                Found f = latestIn(new TopicPartition(topic, p), keyBytes);
                if (f != null && (best == null || f.record.timestamp() > best.record.timestamp())) {
                    best = f;
                }
            }
            if (best == null) {
                throw new TierlogException(ErrorType.UNKNOWN_KEY, "topic '" + topic + "' has no record with this key",
                        Map.of("topic", topic));
            }
            return Response.ok(render(best, encoding), MediaType.APPLICATION_JSON).build();
        }, readPool);
    }

    private record Found(TopicPartition tp, LogRecord record) {
    }

    /** The key's latest record in one partition, or null (none, a tombstone, or below the log start). */
    private Found latestIn(TopicPartition tp, byte[] key) {
        OptionalLong offset = reads.hot().latestOffset(tp, key);
        if (offset.isEmpty()) {
            return null;
        }
        FetchResult read;
        try {
            read = reads.fetch(tp, offset.getAsLong(), 1, 1);
        } catch (TierlogException e) {
            if (e.type() == ErrorType.OFFSET_OUT_OF_RANGE) {
                return null; // retention removed it (a delete-policy topic)
            }
            throw e;
        }
        if (read.records().isEmpty()) {
            return null;
        }
        LogRecord r = read.records().get(0);
        // The record at that offset, unless the log changed under the index (e.g. the topic was re-created).
        return r.offset() == offset.getAsLong() && Arrays.equals(r.key(), key) && r.value() != null
                ? new Found(tp, r) : null;
    }

    private static byte[] keyBytes(String key, String keyEncoding) {
        if (keyEncoding == null || keyEncoding.equals("utf8")) {
            return key.getBytes(StandardCharsets.UTF_8);
        }
        if (!keyEncoding.equals("base64")) {
            throw Requests.bad("keyEncoding", "keyEncoding must be 'base64' (or absent for UTF-8), not '"
                    + Requests.shorten(keyEncoding) + "'");
        }
        try {
            // The URL decoder accepts base64url with or without padding.
            return Base64.getUrlDecoder().decode(key);
        } catch (IllegalArgumentException e) {
            throw Requests.bad("key", "key is not base64url: " + e.getMessage());
        }
    }

    private static byte[] render(Found f, Encoding encoding) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            RecordJson.write(g, f.tp.topic(), f.tp.partition(), f.record, encoding);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
