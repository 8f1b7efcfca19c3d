package io.tierlog.sharegroups;

import io.tierlog.sharegroups.SharePartitionState.DeadLetter;
import io.tierlog.sharegroups.SharePartitionState.InFlight;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The binary form of a share-partition's state file: a header (magic {@code TLSP}, format version, a random
 * generation chosen at each write) and a body (the state, then a CRC32C of the body). The generation lets a process
 * that wrote or read the file keep the decoded state and skip decoding when the file still carries that generation
 * (no other process wrote since). Binary because the whole window is written on every commit: JSON made that write
 * several times longer (ADR 0014). Files written as JSON by earlier builds are still read. Stateless and thread-safe.
 */
final class StateCodec {
    static final int MAGIC = 0x544C5350; // "TLSP"
    static final byte VERSION = 1;
    /** Magic, version, generation. */
    static final int HEADER_BYTES = 4 + 1 + 8;

    private StateCodec() {
    }

    /** The generation of a state file's content, or 0 for a file in the legacy JSON form (never cached). */
    static long generation(byte[] file) {
        if (!isBinary(file)) {
            return 0;
        }
        return ByteBuffer.wrap(file, 5, 8).getLong();
    }

    /** Whether two state files hold the same state (their generations aside). */
    static boolean sameBody(byte[] a, byte[] b) {
        return isBinary(a) && isBinary(b)
                && Arrays.equals(a, HEADER_BYTES, a.length, b, HEADER_BYTES, b.length);
    }

    /** Encodes into one exactly sized array (no stream, no copy: this runs on every commit, over the whole window). */
    static byte[] encode(SharePartitionState s, long generation) {
        byte[] deadLetters = deadLetters(s);
        int size = HEADER_BYTES + 3 * 8 + 4 + s.records.size() * 37 + deadLetters.length
                + 4 + s.deadLetterSequences.size() * 8 + 4;
        ByteBuffer out = ByteBuffer.allocate(size);
        out.putInt(MAGIC);
        out.put(VERSION);
        out.putLong(generation);
        out.putLong(s.incarnation);
        out.putLong(s.startOffset);
        out.putLong(s.endOffset);
        out.putInt(s.records.size());
        for (Map.Entry<Long, InFlight> e : s.records.entrySet()) {
            StateLogCodec.putEntry(out, e.getKey(), e.getValue());
        }
        out.put(deadLetters);
        out.putInt(s.deadLetterSequences.size());
        for (Map.Entry<Integer, Integer> e : s.deadLetterSequences.entrySet()) {
            out.putInt(e.getKey());
            out.putInt(e.getValue());
        }
        byte[] file = out.array();
        CRC32C crc = new CRC32C();
        crc.update(file, HEADER_BYTES, out.position() - HEADER_BYTES);
        out.putInt((int) crc.getValue());
        return file;
    }

    /** The pending dead letters with their count in front (rare: {@link DataOutputStream}'s text form is fine). */
    static byte[] deadLetters(SharePartitionState s) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(4 + s.deadLetters.size() * 64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(s.deadLetters.size());
            for (DeadLetter d : s.deadLetters) {
                out.writeLong(d.offset);
                out.writeUTF(d.reason);
                out.writeInt(d.deliveryCount);
                out.writeUTF(d.topic);
                out.writeInt(d.partition);
                out.writeInt(d.sequence);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot encode share-group state", e); // a byte array does not fail
        }
        return bytes.toByteArray();
    }

    /**
     * The state a file holds.
     *
     * @throws UncheckedIOException for a file that is neither a whole binary state nor legacy JSON
     */
    static SharePartitionState decode(byte[] file) {
        if (!isBinary(file)) {
            return ShareGroupFiles.read(file, SharePartitionState.class);
        }
        try {
            CRC32C crc = new CRC32C();
            crc.update(file, HEADER_BYTES, file.length - HEADER_BYTES - 4);
            ByteBuffer in = ByteBuffer.wrap(file);
            if (in.getInt(file.length - 4) != (int) crc.getValue()) {
                throw new UncheckedIOException(new IOException("corrupt share-group state: CRC mismatch"));
            }
            in.position(HEADER_BYTES);
            return StateLogCodec.readState(in);
        } catch (BufferUnderflowException | IndexOutOfBoundsException e) {
            throw new UncheckedIOException(new IOException("corrupt share-group state: truncated", e));
        }
    }

    /** Reads what {@link #deadLetters} wrote and the dead-letter sequences after it, replacing both in {@code s}. */
    static void readDeadLetters(ByteBuffer in, SharePartitionState s) {
        s.deadLetters.clear();
        s.deadLetterSequences.clear();
        for (int i = in.getInt(); i > 0; i--) {
            DeadLetter d = new DeadLetter();
            d.offset = in.getLong();
            d.reason = utf(in);
            d.deliveryCount = in.getInt();
            d.topic = utf(in);
            d.partition = in.getInt();
            d.sequence = in.getInt();
            s.deadLetters.add(d);
        }
        for (int i = in.getInt(); i > 0; i--) {
            s.deadLetterSequences.put(in.getInt(), in.getInt());
        }
    }

    private static boolean isBinary(byte[] file) {
        return file.length >= HEADER_BYTES + 4 && ByteBuffer.wrap(file).getInt(0) == MAGIC && file[4] == VERSION;
    }

    /** Reads what {@link DataOutputStream#writeUTF} wrote (names and reasons: ASCII in practice). */
    private static String utf(ByteBuffer in) {
        int len = Short.toUnsignedInt(in.getShort());
        byte[] b = new byte[len];
        in.get(b);
        try {
            return new java.io.DataInputStream(new java.io.ByteArrayInputStream(prefixed(b))).readUTF();
        } catch (IOException e) {
            throw new UncheckedIOException("corrupt share-group state: bad text", e);
        }
    }

    private static byte[] prefixed(byte[] b) {
        byte[] out = new byte[b.length + 2];
        out[0] = (byte) (b.length >>> 8);
        out[1] = (byte) b.length;
        System.arraycopy(b, 0, out, 2, b.length);
        return out;
    }
}
