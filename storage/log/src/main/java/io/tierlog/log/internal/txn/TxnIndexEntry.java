package io.tierlog.log.internal.txn;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * One entry of a partition's transaction index ({@value #FILE_NAME}): a producer's transaction began at
 * {@code offset} (its first batch), or ended with the marker at {@code offset}, committed or aborted. Fixed
 * {@value #SIZE} bytes, big-endian, each with its own CRC32C so that a torn or damaged entry is recognised alone:
 *
 * <pre>
 * offset  size  field
 *      0     1  type          1 BEGIN, 2 END commit, 3 END abort
 *      1     1  version = 1
 *      2     2  producerEpoch
 *      4     8  producerId
 *     12     8  offset        BEGIN: the transaction's first offset; END: the marker's offset
 *     20     8  reserved (0)
 *     28     4  crc           CRC32C of bytes 0..27
 * </pre>
 */
public record TxnIndexEntry(Type type, long producerId, short producerEpoch, long offset) {
    public static final String FILE_NAME = "txn.index";
    public static final int SIZE = 32;
    private static final byte VERSION = 1;
    private static final int CRC_OFFSET = 28;

    public enum Type {
        BEGIN(1), COMMIT(2), ABORT(3);

        private final byte code;

        Type(int code) {
            this.code = (byte) code;
        }

        static Type of(byte code) {
            for (Type t : values()) {
                if (t.code == code) {
                    return t;
                }
            }
            return null;
        }
    }

    public static TxnIndexEntry begin(long producerId, short epoch, long firstOffset) {
        return new TxnIndexEntry(Type.BEGIN, producerId, epoch, firstOffset);
    }

    public static TxnIndexEntry end(long producerId, short epoch, long markerOffset, boolean commit) {
        return new TxnIndexEntry(commit ? Type.COMMIT : Type.ABORT, producerId, epoch, markerOffset);
    }

    public boolean isBegin() {
        return type == Type.BEGIN;
    }

    public ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.BIG_ENDIAN);
        b.put(type.code).put(VERSION).putShort(producerEpoch).putLong(producerId).putLong(offset).putLong(0);
        b.putInt(CRC_OFFSET, (int) crc(b));
        return b.clear();
    }

    /** The entry in {@code b}'s next {@value #SIZE} bytes (absolute reads), or null if its CRC or fields are bad. */
    static TxnIndexEntry decode(ByteBuffer b, int at) {
        ByteBuffer e = b.slice(at, SIZE).order(ByteOrder.BIG_ENDIAN);
        if ((int) crc(e) != e.getInt(CRC_OFFSET) || e.get(1) != VERSION) {
            return null;
        }
        Type type = Type.of(e.get(0));
        return type == null ? null : new TxnIndexEntry(type, e.getLong(4), e.getShort(2), e.getLong(12));
    }

    private static long crc(ByteBuffer entry) {
        CRC32C crc = new CRC32C();
        crc.update(entry.duplicate().position(0).limit(CRC_OFFSET));
        return crc.getValue();
    }
}
