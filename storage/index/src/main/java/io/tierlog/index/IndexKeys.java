package io.tierlog.index;

import io.tierlog.log.TopicPartition;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The byte layout of the index's RocksDB keys; see {@link LogIndex} for the full format. Every key of a partition
 * starts with the same prefix, so a partition is one contiguous key range, and numbers are big-endian so that
 * RocksDB's bytewise order is numeric order. Stateless and thread-safe.
 */
final class IndexKeys {
    static final byte KIND_OFFSET = 0x01;
    static final byte KIND_TIME = 0x02;
    static final byte KIND_CHECKPOINT = 0x03;
    static final byte KIND_KEY = 0x04;
    /** Greater than every kind byte: {@code prefix + END} bounds a partition's key range from above. */
    private static final byte KIND_END = (byte) 0xFF;

    /**
     * The key holding the format version. It starts with 0x00, which no partition key can (topic names are
     * {@code [A-Za-z0-9._-]+}), so it never collides with partition data.
     */
    static final byte[] FORMAT_KEY = "\0tierlog-index-format".getBytes(StandardCharsets.US_ASCII);

    private IndexKeys() {
    }

    /** {@code topic UTF-8, 0x00, partition int32 BE}. Topic names cannot contain 0x00, so no prefix is a prefix of another. */
    static byte[] partitionPrefix(TopicPartition tp) {
        byte[] topic = tp.topic().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(topic.length + 5).put(topic).put((byte) 0).putInt(tp.partition()).array();
    }

    static byte[] offsetKey(byte[] prefix, long offset) {
        return numberKey(prefix, KIND_OFFSET, offset);
    }

    /** Timestamps may be negative (-1 is Kafka's "no timestamp"): flipping the sign bit makes bytewise order signed order. */
    static byte[] timeKey(byte[] prefix, long timestamp) {
        return numberKey(prefix, KIND_TIME, timestamp ^ Long.MIN_VALUE);
    }

    /** {@code prefix | 0x04 | record key bytes}: any bytes, so these keys have no fixed length. */
    static byte[] recordKeyKey(byte[] prefix, ByteBuffer recordKey) {
        ByteBuffer k = recordKey.duplicate();
        return ByteBuffer.allocate(prefix.length + 1 + k.remaining()).put(prefix).put(KIND_KEY).put(k).array();
    }

    static byte[] checkpointKey(byte[] prefix) {
        return kindKey(prefix, KIND_CHECKPOINT);
    }

    /** The smallest key of one kind in the partition (inclusive lower bound of its range). */
    static byte[] kindKey(byte[] prefix, byte kind) {
        byte[] key = Arrays.copyOf(prefix, prefix.length + 1);
        key[prefix.length] = kind;
        return key;
    }

    /** Exclusive upper bound of all keys of the partition. */
    static byte[] partitionEnd(byte[] prefix) {
        return kindKey(prefix, KIND_END);
    }

    static boolean hasKind(byte[] key, byte[] prefix, byte kind) {
        if (key.length != prefix.length + 1 + Long.BYTES || key[prefix.length] != kind) {
            return false;
        }
        return Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
    }

    /** The offset of an offset key. */
    static long offsetOf(byte[] key) {
        return ByteBuffer.wrap(key).getLong(key.length - Long.BYTES);
    }

    /** The timestamp of a time key. */
    static long timestampOf(byte[] key) {
        return ByteBuffer.wrap(key).getLong(key.length - Long.BYTES) ^ Long.MIN_VALUE;
    }

    private static byte[] numberKey(byte[] prefix, byte kind, long number) {
        return ByteBuffer.allocate(prefix.length + 1 + Long.BYTES).put(prefix).put(kind).putLong(number).array();
    }
}
