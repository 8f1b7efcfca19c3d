package io.tierlog.bench.batches;

import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * The client side of the service's binary reads ({@code Accept: application/vnd.tierlog.record-batches}, on paged
 * fetch and on the stream): whole Kafka RecordBatch v2 batches back to back, each framed by its own header, i.e.
 * {@code baseOffset} (int64, big-endian) then {@code batchLength} (int32, the bytes after that field), so one batch
 * is {@code 12 + batchLength} bytes. Decodes them as a Kafka consumer does, with kafka-clients: each batch's CRC32C
 * is checked ({@code ensureValid}) and its records are iterated; records below the requested offset are skipped
 * (the first batch may begin below it, Kafka semantics) and so are records at or past {@code end}; the rest must
 * run densely from the requested offset, else decoding fails. Records and value bytes (sizes, values not copied)
 * are summed across calls, so one decoder follows one partition read across many fetches.
 *
 * <p>Not thread-safe: one decoder per reader. Malformed input (a short batch, a bad CRC, a gap, a magic other
 * than 2) fails with {@link IOException} naming the offset, and leaves the decoder unusable for that read.
 *
 * <p>One of bench's two doors to kafka-clients' {@code record.internal} (with {@code compare.RecordBatchBody}):
 * Kafka 4 has no public API that reads a RecordBatch v2, and the benchmark must check batches as Kafka's consumer does.
 */
public final class RecordBatchDecoder {
    /** The media type of the binary reads (the service's {@code RecordBatchesMedia.TYPE}). */
    public static final String MEDIA_TYPE = "application/vnd.tierlog.record-batches";
    /** baseOffset (int64) and batchLength (int32): the bytes before the length-counted part of a batch. */
    static final int LOG_OVERHEAD = 12;
    /** The smallest v2 batch header after the length field (61-byte header minus the 12 above). */
    private static final int MIN_BATCH_LENGTH = 49;
    /** A sanity bound: the service never writes batches near this, so a larger length means a broken frame. */
    private static final int MAX_BATCH_LENGTH = 64 << 20;

    private final long end;
    private long next;
    private long records;
    private long valueBytes;
    private long batchesEnd = -1;
    private byte[] buffer = new byte[64 * 1024];

    /**
     * @param from the first offset wanted (the {@code offset} of the first request)
     * @param end  offsets at or past this are not counted ({@link Long#MAX_VALUE}: no bound)
     */
    public RecordBatchDecoder(long from, long end) {
        if (from < 0 || end < from) {
            throw new IllegalArgumentException("need 0 <= from <= end, got from=" + from + ", end=" + end);
        }
        this.next = from;
        this.end = end;
    }

    /**
     * Decodes a paged fetch body: zero or more whole batches back to back. Fails if the body ends inside a batch.
     */
    public void decode(ByteBuffer body) throws IOException {
        int size = body.remaining();
        int decoded = 0;
        for (RecordBatch batch : MemoryRecords.readableRecords(body.slice()).batches()) {
            decodeBatch(batch);
            decoded += batch.sizeInBytes();
        }
        if (decoded != size) {
            // MemoryRecords stops silently at a partial batch; a fetch body never carries one.
            throw new IOException("record-batch body has " + (size - decoded) + " trailing bytes that are not a "
                    + "whole batch, after offset " + (next - 1));
        }
    }

    /**
     * Reads one batch from a stream (blocking until its bytes are there) and decodes it. Returns false at a clean
     * end of the stream between batches; fails if the stream ends inside a batch or a frame is malformed.
     */
    public boolean readBatch(InputStream in) throws IOException {
        int header = in.readNBytes(buffer, 0, LOG_OVERHEAD);
        if (header == 0) {
            return false;
        }
        if (header < LOG_OVERHEAD) {
            throw new IOException("record-batch stream ended inside a batch header at offset " + next);
        }
        int length = ByteBuffer.wrap(buffer, 8, 4).getInt();
        if (length < MIN_BATCH_LENGTH || length > MAX_BATCH_LENGTH) {
            throw new IOException("record-batch stream has batchLength " + length + " at offset " + next);
        }
        int size = LOG_OVERHEAD + length;
        if (buffer.length < size) {
            byte[] bigger = new byte[Math.max(size, buffer.length * 2)];
            System.arraycopy(buffer, 0, bigger, 0, LOG_OVERHEAD);
            buffer = bigger;
        }
        if (in.readNBytes(buffer, LOG_OVERHEAD, length) < length) {
            throw new IOException("record-batch stream ended inside a batch at offset " + next);
        }
        decode(ByteBuffer.wrap(buffer, 0, size));
        return true;
    }

    private void decodeBatch(RecordBatch batch) throws IOException {
        if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
            throw new IOException("batch at offset " + batch.baseOffset() + " has magic " + batch.magic());
        }
        try {
            batch.ensureValid();
        } catch (RuntimeException e) {
            throw new IOException("batch at offset " + batch.baseOffset() + " is corrupt: " + e.getMessage(), e);
        }
        for (Record record : batch) {
            long offset = record.offset();
            if (offset < next || offset >= end) {
                continue; // before the requested offset (first batch), or past the range read
            }
            if (offset != next) {
                throw new IOException("record offsets jump from " + (next - 1) + " to " + offset);
            }
            records++;
            valueBytes += Math.max(0, record.valueSize()); // -1 for a null value
            next++;
        }
        batchesEnd = batch.nextOffset();
    }

    /**
     * Fails unless a response's Content-Type is {@link #MEDIA_TYPE}: a service that ignored the Accept header would
     * otherwise be decoded as garbage.
     */
    public static void requireMediaType(String contentType, String what) throws IOException {
        if (contentType == null || !contentType.toLowerCase(java.util.Locale.ROOT).startsWith(MEDIA_TYPE)) {
            throw new IOException(what + " answered Content-Type " + contentType + ", not " + MEDIA_TYPE);
        }
    }

    /** The next offset to read: one after the last record counted (the requested offset before any). */
    public long next() {
        return next;
    }

    /** Records counted so far (at or above the requested offset, below {@code end}). */
    public long records() {
        return records;
    }

    /** Value bytes of those records (the stored bytes: for {@code encoding=json}, the JSON text). */
    public long valueBytes() {
        return valueBytes;
    }

    /** The offset after the last record of the last batch decoded, whatever its range; -1 before any batch. */
    public long batchesEnd() {
        return batchesEnd;
    }

    /** Whether every offset below {@code end} has been counted. */
    public boolean done() {
        return next >= end;
    }
}
