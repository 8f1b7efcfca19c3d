package io.tierlog.log.internal.segment;

import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.RecordBatchCodec;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Walks the record batches of one segment file from a byte position, reading in large chunks and validating
 * every batch (length, magic, CRC32C) before exposing it.
 *
 * <p>Each {@link #next()} classifies what lies at the current position:
 * <ul>
 *   <li>{@link Step#BATCH}: a complete, valid batch; see {@link #batch()} and {@link #info()};</li>
 *   <li>{@link Step#END}: the position is exactly the end of the file;</li>
 *   <li>{@link Step#INCOMPLETE}: the bytes stop before the announced end of a batch. This is what an append in
 *       progress looks like to a reader, and what a writer killed mid-write leaves behind;</li>
 *   <li>{@link Step#CORRUPT}: a batch whose announced end lies within the file fails validation. A crash cannot
 *       produce this (bytes are written in order and the file grows with them), so it is corruption;</li>
 *   <li>{@link Step#FULL}: a complete batch that the {@link Window} does not admit (a read that has all the bytes it
 *       wants); the position stays before it.</li>
 * </ul>
 * The file size is sampled when the cursor is created and again when the cursor reaches it, so a reader sees
 * appends made while it walks. Not thread-safe; does not own the channel.
 */
public final class SegmentCursor {
    public enum Step { BATCH, END, INCOMPLETE, CORRUPT, FULL }

    private static final int DEFAULT_CHUNK = 256 * 1024;

    /**
     * The memory a cursor reads the file through. {@link ChunkWindow} reuses one chunk (most walks); a batch read
     * passes memory it keeps the batches in, so they are read once, straight to where they are returned.
     */
    public interface Window {
        /** A cursor starts reading a (new) file at {@code position}: bytes held from before are stale. */
        void startAt(long position);

        /**
         * A view of the file's bytes {@code [position, position + n)}, which the cursor has checked lie within
         * {@code fileSize}. Positions only grow between calls; bytes before {@code position} are no longer needed
         * unless the window's owner kept them.
         */
        ByteBuffer view(FileChannel channel, long fileSize, long position, int n) throws IOException;

        /** Whether a batch of {@code size} bytes is wanted; when not, the walk stops before it ({@link Step#FULL}). */
        default boolean admits(long size) {
            return true;
        }
    }

    private final FileChannel channel;
    private final long segmentBase;
    private long position;
    private long fileSize;
    private final Window window;
    private ByteBuffer batch;
    private BatchInfo info;
    private String problem;

    public SegmentCursor(FileChannel channel, long segmentBase, long position) throws IOException {
        this(channel, segmentBase, position, DEFAULT_CHUNK);
    }

    public SegmentCursor(FileChannel channel, long segmentBase, long position, int chunkSize) throws IOException {
        this(channel, segmentBase, position, new ChunkWindow(chunkSize));
    }

    public SegmentCursor(FileChannel channel, long segmentBase, long position, Window window) throws IOException {
        this.channel = channel;
        this.segmentBase = segmentBase;
        this.position = position;
        this.fileSize = channel.size();
        this.window = window;
        window.startAt(position);
    }

    public Step next() throws IOException {
        batch = null;
        info = null;
        problem = null;
        if (!available(RecordBatchCodec.LOG_OVERHEAD)) {
            return position == fileSize ? Step.END : Step.INCOMPLETE;
        }
        ByteBuffer header = window.view(channel, fileSize, position, RecordBatchCodec.LOG_OVERHEAD);
        long size = RecordBatchCodec.announcedSize(header);
        if (size < RecordBatchCodec.HEADER_SIZE || size > Integer.MAX_VALUE - 8) {
            problem = "announced batch size " + size + " is impossible";
            return Step.CORRUPT;
        }
        if (!available(size)) {
            return Step.INCOMPLETE;
        }
        if (!window.admits(size)) {
            return Step.FULL;
        }
        ByteBuffer candidate = window.view(channel, fileSize, position, (int) size);
        String invalid = RecordBatchCodec.validate(candidate);
        if (invalid != null) {
            problem = invalid;
            return Step.CORRUPT;
        }
        batch = candidate;
        info = RecordBatchCodec.info(segmentBase, position, candidate);
        position += size;
        return Step.BATCH;
    }

    /**
     * After {@link Step#INCOMPLETE}: null if the bytes from the position to the end of the file can be what a writer
     * killed mid-write leaves, else why they cannot. A torn write is a strict prefix of one batch (bytes reach the
     * file in order), so its magic byte, once written, is 2, and no prefix of it is a complete valid batch. If some
     * prefix is a complete batch whose CRC32C matches and whose records parse once the length field is set to the
     * prefix length, the length field was damaged: truncating there would destroy an acknowledged batch (and every
     * batch after it). Reads the tail once, byte by byte through an incremental CRC; meant for recovery, not for
     * the read path.
     */
    public String tornTailProblem() throws IOException {
        long start = position;
        long n = channel.size() - start;
        if (n <= RecordBatchCodec.MAGIC_OFFSET) {
            return null;
        }
        ByteBuffer header = ByteBuffer.allocate((int) Math.min(n, RecordBatchCodec.HEADER_SIZE));
        readFully(header, start);
        byte magic = header.get(RecordBatchCodec.MAGIC_OFFSET);
        if (magic != RecordBatchCodec.MAGIC) {
            return "incomplete batch with magic " + magic + ": a torn write would start with a valid header";
        }
        if (n < RecordBatchCodec.HEADER_SIZE) {
            return null;
        }
        long storedCrc = Integer.toUnsignedLong(header.getInt(RecordBatchCodec.CRC_OFFSET));
        CRC32C crc = new CRC32C();
        ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
        long rel = RecordBatchCodec.CRC_START_OFFSET;
        while (rel < n) {
            buf.clear().limit((int) Math.min(buf.capacity(), n - rel));
            readFully(buf, start + rel);
            buf.flip();
            while (buf.hasRemaining()) {
                crc.update(buf.get());
                rel++;
                if (rel >= RecordBatchCodec.HEADER_SIZE && crc.getValue() == storedCrc
                        && isCompleteBatchWithLength(start, rel)) {
                    return "the first " + rel + " bytes of the incomplete batch are a complete valid batch whose length "
                            + "field is damaged (announced " + RecordBatchCodec.announcedSize(header) + " bytes)";
                }
            }
        }
        return null;
    }

    private boolean isCompleteBatchWithLength(long start, long size) throws IOException {
        if (size > Integer.MAX_VALUE - 8) {
            return false;
        }
        ByteBuffer candidate = ByteBuffer.allocate((int) size);
        readFully(candidate, start);
        candidate.flip();
        candidate.putInt(RecordBatchCodec.LENGTH_OFFSET, (int) size - RecordBatchCodec.LOG_OVERHEAD);
        if (RecordBatchCodec.validate(candidate) != null) {
            return false;
        }
        try {
            BatchInfo candidateInfo = RecordBatchCodec.info(segmentBase, start, candidate);
            List<LogRecord> records = new ArrayList<>();
            // A control batch decodes to no data records; its one control record is checked by the CRC alone.
            return candidateInfo.control() || RecordBatchCodec.decode(candidate, Long.MIN_VALUE, Integer.MAX_VALUE,
                    records) == candidateInfo.recordCount();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void readFully(ByteBuffer into, long at) throws IOException {
        long p = at;
        while (into.hasRemaining()) {
            int read = channel.read(into, p);
            if (read < 0) {
                throw new IOException("file shrank while reading at " + p);
            }
            p += read;
        }
    }

    /** The bytes of the batch that the last {@link Step#BATCH} step returned (a view; valid until the next step). */
    public ByteBuffer batch() {
        return batch;
    }

    public BatchInfo info() {
        return info;
    }

    /** Why the last step was {@link Step#CORRUPT}. */
    public String problem() {
        return problem;
    }

    /** The byte position after the last valid batch: where the next step reads. */
    public long position() {
        return position;
    }

    /** True if {@code n} bytes from the position exist in the file, resampling its size once if needed. */
    private boolean available(long n) throws IOException {
        if (position + n <= fileSize) {
            return true;
        }
        fileSize = channel.size();
        return position + n <= fileSize;
    }
}
