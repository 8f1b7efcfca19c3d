package io.tierlog.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.tierlog.ingest.EncodedProduce;
import io.tierlog.ingest.Partitioner;
import io.tierlog.ingest.ProducerRef;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.RecordBatchWriter;
import io.tierlog.log.topic.TopicMetadata;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.function.ToIntFunction;

/**
 * Parses a JSON produce body (docs/api.md) in one streaming pass straight into the Kafka record batches it
 * appends, one per partition it touches ({@link RecordBatchWriter}): no list of records, no per-record objects or
 * Strings, a JSON value copied verbatim from the body (compacted when it holds whitespace), keys and header values
 * encoded to UTF-8 from the parser's character buffer, partitions chosen as each record ends (explicit, Kafka's
 * murmur2 of the key, or the request's unkeyed partition). The batches are byte for byte what the reference path
 * ({@link ProduceRequestParser} then {@code IngestService.produce}) appends for the same body, clock and rotation.
 *
 * <p>It only takes the bodies it can encode exactly; for anything else it declines ({@link #encode} answers null)
 * and the caller hands the body to the reference path, which answers exactly as before: every invalid body (the
 * errors and their precedence stay the reference parser's, naming the field), an unknown partition, a record over
 * {@code max.message.bytes}, producer sequences that do not match the partitions touched, and the rare shapes
 * below. Nothing is appended by a declined pass. Two shapes take a second pass of this encoder instead: a body
 * whose {@code "encoding": "base64"} follows its records (the first pass assumed {@code json}), and unkeyed records
 * whose partition, known only at the end (it may depend on a {@code producer} that follows the records), also
 * holds keyed or explicitly placed records of the request (their order in the batch must be request order).
 *
 * <p>Buffers (the batches' arrays and a per-record scratch) come from a small pool and go back to it when the
 * {@link Encoded} is closed, after the append. Thread-safe.
 */
final class ProduceBodyEncoder {
    /**
     * At most this many sets of buffers are kept for reuse. A set is held from the parse until the append has
     * returned, which with {@code fsync=always} includes the fsync wait: 8 producers with 5 requests in flight each
     * missed a pool of 8 and allocated fresh (humongous) batch arrays.
     */
    private static final int POOLED = 16;
    /**
     * A set of buffers larger than this in total is not kept: the pool holds at most POOLED times this, 32 MiB as
     * when it kept 8 sets of 4 MiB.
     */
    private static final int MAX_POOLED_BYTES = 2 << 20;
    /** The largest batch array allocated up front ({@link Buffers#sizeFor}); a batch may grow beyond it. */
    private static final int MAX_INITIAL_CAPACITY = 4 << 20;
    private static final ArrayBlockingQueue<Buffers> POOL = new ArrayBlockingQueue<>(POOLED);
    /** Partition of a record whose partition is decided at the end of the body (unkeyed, no preset). */
    private static final int UNKEYED = -1;

    private ProduceBodyEncoder() {
    }

    /** An encoded request and the pooled buffers its batches live in; close after the append. */
    static final class Encoded implements AutoCloseable {
        private final EncodedProduce request;
        private Buffers buffers;

        private Encoded(EncodedProduce request, Buffers buffers) {
            this.request = request;
            this.buffers = buffers;
        }

        EncodedProduce request() {
            return request;
        }

        @Override
        public void close() {
            if (buffers != null) {
                release(buffers);
                buffers = null;
            }
        }
    }

    /**
     * The body's batches for {@code topic}, or null when this encoder declines it (see the class comment).
     *
     * @param now      the timestamp of records that carry none
     * @param unkeyed  the partition of the request's unkeyed records given its producer fields; called at most once,
     *                 and only when the body has unkeyed records
     */
    static Encoded encode(byte[] body, TopicMetadata topic, long now,
                          ToIntFunction<Optional<ProducerRef>> unkeyed) {
        return encode(body, body.length, topic, now, unkeyed);
    }

    /**
     * {@link #encode(byte[], TopicMetadata, long, ToIntFunction)} of the body {@code body[0, length)}: the array may
     * be longer (pooled memory the body was read into), and nothing after {@code length} is read.
     */
    static Encoded encode(byte[] body, int length, TopicMetadata topic, long now,
                          ToIntFunction<Optional<ProducerRef>> unkeyed) {
        Buffers buffers = take();
        buffers.sizeFor(length);
        try {
            Encoding encoding = null;
            int unkeyedPartition = UNKEYED;
            for (int attempt = 0; attempt < 3; attempt++) {
                buffers.reset(topic.partitions());
                Pass pass = new Pass(body, length, buffers, topic, now, encoding, unkeyedPartition);
                EncodedProduce request = pass.run(unkeyed);
                if (request != null) {
                    return new Encoded(request, buffers);
                }
                encoding = pass.encoding;
                unkeyedPartition = pass.unkeyedPartition;
            }
        } catch (Declined | IOException | RuntimeException e) {
            // Declined, an invalid body (a JsonProcessingException, a TierlogException from a shared check), or an
            // unforeseen failure: the reference path answers, exactly as before.
        }
        release(buffers);
        return null;
    }

    /** Raised inside a pass to hand the body to the reference path; cheap (no stack trace). */
    private static final class Declined extends Exception {
        private static final Declined INSTANCE = new Declined();

        private Declined() {
            super("declined", null, false, false);
        }
    }

    private static Declined decline() {
        return Declined.INSTANCE;
    }

    /** One pass over the body. */
    private static final class Pass {
        private final byte[] body;
        private final int length;
        private final Buffers buffers;
        private final TopicMetadata topic;
        private final long now;
        private final int maxMessageBytes;
        /** The encoding the records are read in: the preset one, else {@code json} until the field says otherwise. */
        Encoding encoding;
        /** The unkeyed records' partition: preset, or decided at the end of this pass. */
        int unkeyedPartition;
        private final boolean encodingPreset;
        private final boolean unkeyedPreset;
        private JsonParser p;

        // The current record's fields: slices of the body or of buffers.scratch; a length of -1 is null.
        private byte[] keyArray;
        private int keyOff;
        private int keyLength;
        private byte[] valueArray;
        private int valueOff;
        private int valueLength;
        private boolean hasValue;
        private int headerCount;
        private int headersOff;
        private int headersLength;
        private int headerPayload;
        private long partition;
        private long timestamp;

        Pass(byte[] body, int length, Buffers buffers, TopicMetadata topic, long now, Encoding encoding,
             int unkeyedPartition) {
            this.body = body;
            this.length = length;
            this.buffers = buffers;
            this.topic = topic;
            this.now = now;
            this.maxMessageBytes = topic.config().maxMessageBytes();
            this.encodingPreset = encoding != null;
            this.encoding = encoding == null ? Encoding.JSON : encoding;
            this.unkeyedPreset = unkeyedPartition != UNKEYED;
            this.unkeyedPartition = unkeyedPartition;
        }

        /** The request, or null when a second pass is needed ({@link #encoding}, {@link #unkeyedPartition} set). */
        EncodedProduce run(ToIntFunction<Optional<ProducerRef>> unkeyed) throws IOException, Declined {
            try (JsonParser parser = ProduceRequestParser.JSON.createParser(body, 0, length)) {
                p = parser;
                JsonToken first = p.nextToken();
                if (first != JsonToken.START_OBJECT || p.currentTokenLocation().getByteOffset() < 0) {
                    throw decline();
                }
                boolean recordsSeen = false;
                String encodingText = null;
                Optional<ProducerRef> producer = Optional.empty();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String field = p.currentName();
                    JsonToken t = p.nextToken();
                    switch (field) {
                        case "records" -> {
                            records(t);
                            recordsSeen = true;
                        }
                        case "encoding" -> {
                            if (t == JsonToken.VALUE_STRING) {
                                encodingText = p.getText();
                            } else if (t != JsonToken.VALUE_NULL) {
                                throw decline();
                            }
                            if (!recordsSeen && !encodingPreset) {
                                encoding = Encoding.parse(encodingText, "encoding");
                            }
                        }
                        case "producer" -> producer = new ProduceRequestParser.Pass(body, length, p).producer(t);
                        default -> throw decline();
                    }
                }
                if (p.nextToken() != null || !recordsSeen) {
                    throw decline();
                }
                Encoding given = Encoding.parse(encodingText, "encoding");
                if (given != encoding) {
                    encoding = given;   // "encoding" followed the records: read them again in it
                    return null;
                }
                return finish(producer, unkeyed);
            }
        }

        private void records(JsonToken t) throws IOException, Declined {
            if (t != JsonToken.START_ARRAY) {
                throw decline();
            }
            int index = 0;
            for (JsonToken r = p.nextToken(); r != JsonToken.END_ARRAY; r = p.nextToken()) {
                record(r);
                index++;
            }
            if (index == 0) {
                throw decline();
            }
        }

        private void record(JsonToken t) throws IOException, Declined {
            if (t != JsonToken.START_OBJECT) {
                throw decline();
            }
            buffers.scratchUsed = 0;
            keyLength = -1;
            hasValue = false;
            headerCount = 0;
            headersLength = 0;
            headerPayload = 0;
            partition = -1;
            timestamp = -1;
            int valueStart = -1;
            JsonToken next = p.nextToken();
            while (next == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken v = p.nextToken();
                switch (field) {
                    case "key" -> key(v);
                    case "value" -> {
                        if (v == JsonToken.VALUE_STRING) {
                            // Its end is found once the parser has moved past it, as the reference parser does.
                            valueStart = (int) p.currentTokenLocation().getByteOffset();
                        } else {
                            value(v);
                        }
                    }
                    case "headers" -> headers(v);
                    case "partition" -> partition = integer(v, Integer.MAX_VALUE);
                    case "timestamp" -> timestamp = integer(v, Long.MAX_VALUE);
                    default -> throw decline();
                }
                next = p.nextToken();
                if (valueStart >= 0 && !hasValue) {
                    stringValue(valueStart, (int) p.currentTokenLocation().getByteOffset());
                }
            }
            if (!hasValue) {
                throw decline();
            }
            long payload = (long) Math.max(keyLength, 0) + Math.max(valueLength, 0) + headerPayload;
            if (payload > maxMessageBytes) {
                throw decline();
            }
            int part;
            if (partition >= 0) {
                if (partition >= topic.partitions()) {
                    throw decline();
                }
                part = (int) partition;
            } else if (keyLength >= 0) {
                part = Partitioner.forKey(keyArray, keyOff, keyLength, topic.partitions());
            } else {
                part = unkeyedPartition;
            }
            buffers.writer(part).append(timestamp >= 0 ? timestamp : now, keyArray, keyOff, keyLength, valueArray,
                    valueOff, valueLength, headerCount, buffers.scratch, headersOff, headersLength);
            buffers.addRecord(part);
        }

        private void key(JsonToken v) throws IOException, Declined {
            if (v == JsonToken.VALUE_NULL) {
                keyLength = -1;
                return;
            }
            if (v != JsonToken.VALUE_STRING) {
                throw decline();
            }
            keyArray = buffers.scratch;
            keyOff = buffers.scratchUsed;
            keyLength = stringToScratch();
            keyArray = buffers.scratch;   // the scratch may have grown
        }

        /** A string token's bytes (UTF-8 or base64-decoded) into the scratch; returns their length. */
        private int stringToScratch() throws IOException, Declined {
            if (encoding == Encoding.BASE64) {
                byte[] decoded = base64(p.getText());
                buffers.ensureScratch(decoded.length);
                System.arraycopy(decoded, 0, buffers.scratch, buffers.scratchUsed, decoded.length);
                buffers.scratchUsed += decoded.length;
                return decoded.length;
            }
            char[] chars = p.getTextCharacters();
            int off = p.getTextOffset();
            int len = p.getTextLength();
            buffers.ensureScratch(3 * len);
            int end = Utf8.put(chars, off, len, buffers.scratch, buffers.scratchUsed);
            int n = end - buffers.scratchUsed;
            buffers.scratchUsed = end;
            return n;
        }

        private void value(JsonToken v) throws IOException, Declined {
            hasValue = true;
            if (v == JsonToken.VALUE_NULL) {
                valueLength = -1;
                return;
            }
            if (encoding == Encoding.BASE64) {
                throw decline();
            }
            switch (v) {
                case START_OBJECT, START_ARRAY -> {
                    int start = (int) p.currentTokenLocation().getByteOffset();
                    p.skipChildren();
                    int end = (int) p.currentLocation().getByteOffset();
                    if (!CompactJson.hasSpace(body, start, end)) {
                        valueArray = body;
                        valueOff = start;
                        valueLength = end - start;
                    } else {
                        buffers.ensureScratch(end - start);
                        valueArray = buffers.scratch;
                        valueOff = buffers.scratchUsed;
                        buffers.scratchUsed = CompactJson.copyInto(body, start, end, buffers.scratch, valueOff);
                        valueLength = buffers.scratchUsed - valueOff;
                    }
                }
                case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT, VALUE_TRUE, VALUE_FALSE -> {
                    // the parser keeps the literal text, so a number's digits are stored as the client wrote them
                    char[] chars = p.getTextCharacters();
                    int off = p.getTextOffset();
                    int len = p.getTextLength();
                    buffers.ensureScratch(len);
                    valueArray = buffers.scratch;
                    valueOff = buffers.scratchUsed;
                    for (int i = 0; i < len; i++) {
                        buffers.scratch[valueOff + i] = (byte) chars[off + i];
                    }
                    buffers.scratchUsed += len;
                    valueLength = len;
                }
                default -> throw decline();
            }
        }

        /**
         * A string value starting at {@code start} that the parser has skipped (and so validated) on its way to the
         * token at {@code nextToken}: its closing quote is the last one before that token, behind nothing but
         * whitespace and a comma ({@code ProduceRequestParser}'s reasoning). In {@code json} it is stored with its
         * quotes, verbatim; in {@code base64} its content is decoded.
         */
        private void stringValue(int start, int nextToken) throws Declined {
            int end = CompactJson.stringEnd(body, length, start, nextToken);
            hasValue = true;
            if (encoding == Encoding.JSON) {
                valueArray = body;
                valueOff = start;
                valueLength = end - start;
                return;
            }
            for (int i = start + 1; i < end - 1; i++) {
                if (body[i] == '\\') {
                    throw decline();   // an escaped base64 string: rare, the reference parser decodes it
                }
            }
            ByteBuffer decoded;
            try {
                decoded = Base64.getDecoder().decode(ByteBuffer.wrap(body, start + 1, end - start - 2));
            } catch (IllegalArgumentException e) {
                throw decline();
            }
            int n = decoded.remaining();
            buffers.ensureScratch(n);
            decoded.get(buffers.scratch, buffers.scratchUsed, n);
            valueArray = buffers.scratch;
            valueOff = buffers.scratchUsed;
            valueLength = n;
            buffers.scratchUsed += n;
        }

        private void headers(JsonToken t) throws IOException, Declined {
            if (t == JsonToken.VALUE_NULL) {
                return;
            }
            if (t != JsonToken.START_OBJECT) {
                throw decline();
            }
            // Headers are written in Kafka's form into one run of the scratch; nothing else is written there until
            // they end, so the run stays contiguous.
            headersOff = buffers.scratchUsed;
            headerCount = 0;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                headerPayload += putText();
                JsonToken v = p.nextToken();
                if (v == JsonToken.VALUE_NULL) {
                    buffers.ensureScratch(1);
                    buffers.scratchUsed = RecordBatchWriter.putVarint(buffers.scratch, buffers.scratchUsed, -1);
                } else if (v == JsonToken.VALUE_STRING) {
                    headerValue();
                } else {
                    throw decline();
                }
                headerCount++;
            }
            headersLength = buffers.scratchUsed - headersOff;
        }

        /** A header value: its length prefix, then its bytes, written where the bytes were first put. */
        private void headerValue() throws IOException, Declined {
            if (encoding == Encoding.BASE64) {
                byte[] decoded = base64(p.getText());
                buffers.ensureScratch(RecordBatchWriter.MAX_VARINT_BYTES + decoded.length);
                buffers.scratchUsed = RecordBatchWriter.putHeaderValue(buffers.scratch, buffers.scratchUsed, decoded,
                        0, decoded.length);
                headerPayload += decoded.length;
                return;
            }
            headerPayload += putText();
        }

        /** Writes the current token's text to the scratch as UTF-8 behind its varint length; returns that length. */
        private int putText() throws IOException {
            char[] chars = p.getTextCharacters();
            int off = p.getTextOffset();
            int len = p.getTextLength();
            int n = Utf8.length(chars, off, len);
            buffers.ensureScratch(RecordBatchWriter.MAX_VARINT_BYTES + n);
            int at = RecordBatchWriter.putVarint(buffers.scratch, buffers.scratchUsed, n);
            buffers.scratchUsed = Utf8.put(chars, off, len, buffers.scratch, at);
            return n;
        }

        /** An integer field in [0, max]; -1 when null. */
        private long integer(JsonToken t, long max) throws IOException, Declined {
            if (t == JsonToken.VALUE_NULL) {
                return -1;
            }
            if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                throw decline();
            }
            long v = p.getLongValue();
            if (v < 0 || v > max) {
                throw decline();
            }
            return v;
        }

        /**
         * Places the unkeyed records, finishes each batch with its partition's producer fields, and answers the
         * request; null when the unkeyed records' partition also holds other records of the request (a second
         * pass, with that partition known, writes them in request order).
         */
        private EncodedProduce finish(Optional<ProducerRef> producer, ToIntFunction<Optional<ProducerRef>> unkeyed) {
            if (buffers.unkeyed != null && buffers.unkeyed.recordCount() > 0) {
                unkeyedPartition = unkeyed.applyAsInt(producer);
                if (buffers.writers[unkeyedPartition] != null) {
                    return null;
                }
                buffers.writers[unkeyedPartition] = buffers.unkeyed;
                buffers.unkeyed = null;
                int[] partitionOf = buffers.partitionOf;
                for (int i = 0; i < buffers.records; i++) {
                    if (partitionOf[i] == UNKEYED) {
                        partitionOf[i] = unkeyedPartition;
                    }
                }
            }
            TreeSet<Integer> touched = new TreeSet<>();
            for (int i = 0; i < buffers.writers.length; i++) {
                if (buffers.writers[i] != null) {
                    touched.add(i);
                }
            }
            Map<Integer, ProducerIdentity> identities = producer.map(ref -> ref.identities(touched)).orElse(Map.of());
            List<EncodedProduce.Batch> batches = new ArrayList<>(touched.size());
            for (int part : touched) {
                RecordBatchWriter w = buffers.writers[part];
                ProducerIdentity identity = identities.getOrDefault(part, ProducerIdentity.NONE);
                batches.add(new EncodedProduce.Batch(part, w.finish(identity), w.recordCount(), identity));
            }
            return new EncodedProduce(batches, Arrays.copyOf(buffers.partitionOf, buffers.records), producer);
        }
    }

    private static byte[] base64(String text) throws Declined {
        try {
            return Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw decline();
        }
    }

    /** The reusable arrays of one pass: the batches, the per-record scratch, and the records' partitions. */
    private static final class Buffers {
        byte[] scratch = new byte[4096];
        int scratchUsed;
        /** Writers kept from earlier requests, handed out as partitions are touched. */
        final List<RecordBatchWriter> spare = new ArrayList<>();
        /** Per partition of the topic: its batch, or null while no record of the request lands there. */
        RecordBatchWriter[] writers = new RecordBatchWriter[0];
        /** The batch of unkeyed records whose partition is decided at the end. */
        RecordBatchWriter unkeyed;
        int[] partitionOf = new int[1024];
        int records;
        private int initialCapacity = 64 * 1024;

        void reset(int partitions) {
            for (RecordBatchWriter w : writers) {
                if (w != null) {
                    spare.add(w);
                }
            }
            if (unkeyed != null) {
                spare.add(unkeyed);
                unkeyed = null;
            }
            writers = new RecordBatchWriter[partitions];
            records = 0;
            scratchUsed = 0;
        }

        /**
         * A fresh batch array large enough for a typical body's records: a JSON value is copied as it is, and each
         * record's framing in the batch (about 10 bytes) is no more than its JSON's ({@code {"value":}} and
         * separators). Capped at 1 MiB before, a 1000 x 1 KiB body's batch outgrew it and was copied into a 2 MiB
         * array.
         */
        void sizeFor(int bodyLength) {
            initialCapacity = (int) Math.min(bodyLength + (bodyLength >> 4) + 1024L, MAX_INITIAL_CAPACITY);
        }

        RecordBatchWriter writer(int partition) {
            if (partition == UNKEYED) {
                if (unkeyed == null) {
                    unkeyed = fresh();
                }
                return unkeyed;
            }
            RecordBatchWriter w = writers[partition];
            if (w == null) {
                w = fresh();
                writers[partition] = w;
            }
            return w;
        }

        private RecordBatchWriter fresh() {
            RecordBatchWriter w = spare.isEmpty() ? new RecordBatchWriter(initialCapacity)
                    : spare.remove(spare.size() - 1);
            w.reset();
            return w;
        }

        void addRecord(int partition) {
            if (records == partitionOf.length) {
                partitionOf = Arrays.copyOf(partitionOf, records * 2);
            }
            partitionOf[records++] = partition;
        }

        void ensureScratch(int more) {
            if (scratchUsed + more > scratch.length) {
                scratch = Arrays.copyOf(scratch, Math.max(scratch.length * 2, scratchUsed + more));
            }
        }

        /** Drops what is too large to keep; false when nothing worth keeping is left. */
        boolean trim() {
            reset(0);
            long kept = scratch.length;
            List<RecordBatchWriter> keep = new ArrayList<>();
            for (RecordBatchWriter w : spare) {
                if (kept + w.capacity() <= MAX_POOLED_BYTES) {
                    keep.add(w);
                    kept += w.capacity();
                }
            }
            spare.clear();
            spare.addAll(keep);
            if (scratch.length > MAX_POOLED_BYTES / 4) {
                scratch = new byte[4096];
            }
            if (partitionOf.length > 1 << 16) {
                partitionOf = new int[1024];
            }
            return true;
        }
    }

    private static Buffers take() {
        Buffers b = POOL.poll();
        return b != null ? b : new Buffers();
    }

    private static void release(Buffers b) {
        if (b.trim()) {
            POOL.offer(b);
        }
    }
}
