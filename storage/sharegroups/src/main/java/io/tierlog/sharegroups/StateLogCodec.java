package io.tierlog.sharegroups;

import io.tierlog.sharegroups.SharePartitionState.InFlight;
import io.tierlog.sharegroups.SharePartitionState.Status;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The binary form of a share-partition's state log ({@link ShareStateLog}, ADR 0038): a file header (magic
 * {@code TLSL}, format version) and frames, each {@code length (4) | CRC32C (4) | type (1) | payload}, the CRC over
 * type and payload, the length counting them. The first frame is a {@link #SNAPSHOT} (the whole state); each later
 * one an {@link #UPDATE}: the start and end offsets, the entries of the offsets that changed (each entry whole), and
 * the pending dead letters and dead-letter sequences whole (rarely more than a few bytes). An update holds absolute
 * values, never increments, so applying the same update again changes nothing. Removed entries need no record:
 * everything below the start offset is gone. Stateless and thread-safe.
 */
final class StateLogCodec {
    static final int MAGIC = 0x544C534C; // "TLSL"
    static final byte VERSION = 1;
    static final int FILE_HEADER_BYTES = 4 + 1;
    static final int FRAME_HEADER_BYTES = 4 + 4;
    static final byte SNAPSHOT = 1;
    static final byte UPDATE = 2;
    /** Offset, status, delivery count, lease end, lease length, available-at. */
    static final int ENTRY_BYTES = 8 + 1 + 4 + 8 + 8 + 8;
    private static final Status[] STATUSES = Status.values();

    private StateLogCodec() {
    }

    /** Whether {@code file} starts with a state log's header (else it is an older whole-state file, or empty). */
    static boolean isLog(byte[] file) {
        return file.length >= FILE_HEADER_BYTES && ByteBuffer.wrap(file).getInt(0) == MAGIC && file[4] == VERSION;
    }

    /** A whole new log: the header and one snapshot frame of {@code s}. */
    static byte[] snapshotFile(SharePartitionState s) {
        byte[] tail = tail(s);
        int payload = 8 + 8 + 8 + 4 + s.records.size() * ENTRY_BYTES + tail.length;
        ByteBuffer out = ByteBuffer.allocate(FILE_HEADER_BYTES + FRAME_HEADER_BYTES + 1 + payload);
        out.putInt(MAGIC);
        out.put(VERSION);
        int frame = startFrame(out, SNAPSHOT, payload);
        out.putLong(s.incarnation);
        out.putLong(s.startOffset);
        out.putLong(s.endOffset);
        out.putInt(s.records.size());
        for (Map.Entry<Long, InFlight> e : s.records.entrySet()) {
            putEntry(out, e.getKey(), e.getValue());
        }
        out.put(tail);
        endFrame(out, frame);
        return out.array();
    }

    /**
     * An update frame of what changed in {@code s} since the state {@code start}, {@code end}, {@code lastTail}
     * described (the entries of the offsets {@link SharePartitionState#markChanged} noted, at or above the start and
     * still in the window), or null when nothing did.
     */
    static byte[] updateFrame(SharePartitionState s, long start, long end, byte[] lastTail) {
        long[] changed = s.changed;
        int n = s.changedCount;
        Arrays.sort(changed, 0, n);
        int entries = 0;
        for (int i = 0; i < n; i++) {
            if ((i == 0 || changed[i] != changed[i - 1]) && changed[i] >= s.startOffset
                    && s.records.containsKey(changed[i])) {
                entries++;
            }
        }
        byte[] tail = tail(s);
        if (entries == 0 && s.startOffset == start && s.endOffset == end && Arrays.equals(tail, lastTail)) {
            return null;
        }
        int payload = 8 + 8 + 4 + entries * ENTRY_BYTES + tail.length;
        ByteBuffer out = ByteBuffer.allocate(FRAME_HEADER_BYTES + 1 + payload);
        int frame = startFrame(out, UPDATE, payload);
        out.putLong(s.startOffset);
        out.putLong(s.endOffset);
        out.putInt(entries);
        for (int i = 0; i < n; i++) {
            long offset = changed[i];
            if ((i == 0 || offset != changed[i - 1]) && offset >= s.startOffset) {
                InFlight r = s.records.get(offset);
                if (r != null) {
                    putEntry(out, offset, r);
                }
            }
        }
        out.put(tail);
        endFrame(out, frame);
        return out.array();
    }

    /** The pending dead letters and the dead-letter sequences as frames carry them (compared to skip an empty update). */
    static byte[] tail(SharePartitionState s) {
        byte[] deadLetters = StateCodec.deadLetters(s);
        ByteBuffer out = ByteBuffer.allocate(deadLetters.length + 4 + s.deadLetterSequences.size() * 8);
        out.put(deadLetters);
        out.putInt(s.deadLetterSequences.size());
        for (Map.Entry<Integer, Integer> e : s.deadLetterSequences.entrySet()) {
            out.putInt(e.getKey());
            out.putInt(e.getValue());
        }
        return out.array();
    }

    /** What {@link #replay} read: the state after the last whole frame (null when none), and where that frame ends. */
    record Replayed(SharePartitionState state, int end) {
    }

    /**
     * Applies the whole frames of {@code bytes} from {@code from} on to {@code state} (null before the first snapshot)
     * and stops at the end or at the first frame that is not whole (cut short, or its CRC does not match): the tail a
     * writer that died mid-append left, which held nothing acknowledged. {@code state} is changed in place.
     *
     * @throws UncheckedIOException for a whole frame that does not decode, or an update before any snapshot
     */
    static Replayed replay(byte[] bytes, int from, int to, SharePartitionState state) {
        int pos = from;
        CRC32C crc = new CRC32C();
        ByteBuffer in = ByteBuffer.wrap(bytes, 0, to);
        while (to - pos >= FRAME_HEADER_BYTES + 1) {
            int length = in.getInt(pos);
            if (length < 1 || length > to - pos - FRAME_HEADER_BYTES) {
                break; // cut short
            }
            crc.reset();
            crc.update(bytes, pos + FRAME_HEADER_BYTES, length);
            if (in.getInt(pos + 4) != (int) crc.getValue()) {
                break; // torn
            }
            ByteBuffer frame = ByteBuffer.wrap(bytes, pos + FRAME_HEADER_BYTES + 1, length - 1).slice();
            try {
                state = apply(bytes[pos + FRAME_HEADER_BYTES], frame, state);
            } catch (BufferUnderflowException | IndexOutOfBoundsException e) {
                throw corrupt("a frame shorter than its content", e);
            }
            if (frame.hasRemaining()) {
                throw corrupt("a frame longer than its content", null);
            }
            pos += FRAME_HEADER_BYTES + length;
        }
        return new Replayed(state, pos);
    }

    private static SharePartitionState apply(byte type, ByteBuffer in, SharePartitionState state) {
        if (type == SNAPSHOT) {
            return readState(in);
        }
        if (type != UPDATE) {
            throw corrupt("an unknown frame type " + type, null);
        }
        if (state == null) {
            throw corrupt("an update before any snapshot", null);
        }
        return readBody(in, state);
    }

    /**
     * A whole state as a snapshot holds it (and ADR 0014's binary files after their header): incarnation, start and
     * end offsets, the entries, the dead letters and their sequences.
     */
    static SharePartitionState readState(ByteBuffer in) {
        SharePartitionState s = new SharePartitionState();
        s.incarnation = in.getLong();
        return readBody(in, s);
    }

    /**
     * Start and end offsets, entries and dead letters into {@code state}: what a snapshot holds after its incarnation
     * and what an update frame holds. Entries below the new start are gone (an update's removals need no entry).
     */
    private static SharePartitionState readBody(ByteBuffer in, SharePartitionState state) {
        state.startOffset = in.getLong();
        state.endOffset = in.getLong();
        state.records.headMap(state.startOffset).clear();
        for (int i = in.getInt(); i > 0; i--) {
            long offset = in.getLong();
            state.records.put(offset, entry(in));
        }
        StateCodec.readDeadLetters(in, state);
        return state;
    }

    static InFlight entry(ByteBuffer in) {
        InFlight r = new InFlight();
        r.status = STATUSES[in.get()];
        r.deliveryCount = in.getInt();
        r.leaseUntilMs = in.getLong();
        r.leaseMs = in.getLong();
        r.availableAtMs = in.getLong();
        return r;
    }

    static void putEntry(ByteBuffer out, long offset, InFlight r) {
        out.putLong(offset);
        out.put((byte) r.status.ordinal());
        out.putInt(r.deliveryCount);
        out.putLong(r.leaseUntilMs);
        out.putLong(r.leaseMs);
        out.putLong(r.availableAtMs);
    }

    /** Writes a frame's length and type, leaving room for its CRC; returns where the frame starts. */
    private static int startFrame(ByteBuffer out, byte type, int payload) {
        int start = out.position();
        out.putInt(1 + payload);
        out.putInt(0);
        out.put(type);
        return start;
    }

    private static void endFrame(ByteBuffer out, int start) {
        CRC32C crc = new CRC32C();
        crc.update(out.array(), start + FRAME_HEADER_BYTES, out.position() - start - FRAME_HEADER_BYTES);
        out.putInt(start + 4, (int) crc.getValue());
        if (out.hasRemaining()) {
            throw new IllegalStateException("share state frame sized wrong: " + out.remaining() + " bytes left");
        }
    }

    private static UncheckedIOException corrupt(String what, Exception cause) {
        return new UncheckedIOException(new IOException("corrupt share-group state log: " + what, cause));
    }
}
