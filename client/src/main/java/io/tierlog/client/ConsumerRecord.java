package io.tierlog.client;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;

/**
 * One record read from a partition. {@code key}, {@code value} and header values may be null.
 *
 * <p>A record read as record batches refers to its bytes inside the fetch answer it came in instead of holding
 * copies (docs/adr/0035: an array per record, 100 MB per 100,000 records of 1 KiB, cost the {@link Consumer} three
 * times the CPU of a reader that keeps slices, in garbage collection). So {@link #key()} and {@link #value()} return
 * a <b>new copy at every call</b>; {@link #valueBuffer()}, {@link #valueSize()} and the {@code AsString} methods read
 * the bytes where they are, without a copy. While a record is reachable its fetch answer (at most the consumer's
 * {@code fetchMaxBytes}) stays in memory: an application that keeps records long after processing them keeps
 * {@link #value()} instead. Key and value cannot be changed through the record; it may be read from any thread.
 */
public final class ConsumerRecord {
    private final String topic;
    private final int partition;
    private final long offset;
    private final long timestamp;
    private final byte[] keyBytes;
    private final int keyOffset;
    /** -1: a null key. */
    private final int keyLength;
    private final byte[] valueBytes;
    private final int valueOffset;
    /** -1: a null value. */
    private final int valueLength;
    private final Map<String, byte[]> headers;

    /** A record of these arrays, not copied: the caller must not change them afterwards. */
    public ConsumerRecord(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value,
                          Map<String, byte[]> headers) {
        this(topic, partition, offset, timestamp, key, 0, key == null ? -1 : key.length, value, 0,
                value == null ? -1 : value.length, headers);
    }

    /** A record whose key and value are {@code [offset, offset + length)} of their arrays (length -1: null). */
    ConsumerRecord(String topic, int partition, long offset, long timestamp, byte[] keyBytes, int keyOffset,
                   int keyLength, byte[] valueBytes, int valueOffset, int valueLength, Map<String, byte[]> headers) {
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
        this.timestamp = timestamp;
        this.keyBytes = keyBytes;
        this.keyOffset = keyOffset;
        this.keyLength = keyLength;
        this.valueBytes = valueBytes;
        this.valueOffset = valueOffset;
        this.valueLength = valueLength;
        this.headers = headers;
    }

    public String topic() {
        return topic;
    }

    public int partition() {
        return partition;
    }

    public long offset() {
        return offset;
    }

    public long timestamp() {
        return timestamp;
    }

    /** The header values by name, in the record's order. */
    public Map<String, byte[]> headers() {
        return headers;
    }

    /** A new copy of the key at each call, or null. */
    public byte[] key() {
        return keyLength < 0 ? null : Arrays.copyOfRange(keyBytes, keyOffset, keyOffset + keyLength);
    }

    /** A new copy of the value at each call, or null. */
    public byte[] value() {
        return valueLength < 0 ? null : Arrays.copyOfRange(valueBytes, valueOffset, valueOffset + valueLength);
    }

    /** The key's bytes in place (read-only, no copy), or null. */
    public ByteBuffer keyBuffer() {
        return keyLength < 0 ? null : ByteBuffer.wrap(keyBytes, keyOffset, keyLength).slice().asReadOnlyBuffer();
    }

    /** The value's bytes in place (read-only, no copy), or null. */
    public ByteBuffer valueBuffer() {
        return valueLength < 0 ? null : ByteBuffer.wrap(valueBytes, valueOffset, valueLength).slice().asReadOnlyBuffer();
    }

    /** The key's length in bytes, -1 for a null key. */
    public int keySize() {
        return keyLength;
    }

    /** The value's length in bytes, -1 for a null value. */
    public int valueSize() {
        return valueLength;
    }

    public String keyAsString() {
        return keyLength < 0 ? null : new String(keyBytes, keyOffset, keyLength, StandardCharsets.UTF_8);
    }

    public String valueAsString() {
        return valueLength < 0 ? null : new String(valueBytes, valueOffset, valueLength, StandardCharsets.UTF_8);
    }

    public TopicPartition topicPartition() {
        return new TopicPartition(topic, partition);
    }

    /** Equal when every field and the bytes of key, value and header values are. */
    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ConsumerRecord r)) {
            return false;
        }
        return partition == r.partition && offset == r.offset && timestamp == r.timestamp && topic.equals(r.topic)
                && sameBytes(keyBytes, keyOffset, keyLength, r.keyBytes, r.keyOffset, r.keyLength)
                && sameBytes(valueBytes, valueOffset, valueLength, r.valueBytes, r.valueOffset, r.valueLength)
                && sameHeaders(headers, r.headers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, partition, offset);
    }

    @Override
    public String toString() {
        return "ConsumerRecord[topic=" + topic + ", partition=" + partition + ", offset=" + offset + ", timestamp="
                + timestamp + ", key=" + size(keyLength) + ", value=" + size(valueLength) + ", headers="
                + headers.keySet() + "]";
    }

    private static String size(int length) {
        return length < 0 ? "null" : length + " bytes";
    }

    private static boolean sameBytes(byte[] a, int aFrom, int aLength, byte[] b, int bFrom, int bLength) {
        if (aLength < 0 || bLength < 0) {
            return aLength == bLength;
        }
        return Arrays.equals(a, aFrom, aFrom + aLength, b, bFrom, bFrom + bLength);
    }

    private static boolean sameHeaders(Map<String, byte[]> a, Map<String, byte[]> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (Map.Entry<String, byte[]> e : a.entrySet()) {
            if (!b.containsKey(e.getKey()) || !Arrays.equals(e.getValue(), b.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }
}
