package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * The file format of a {@link TransactionMetadata}: magic, version, the fields, then a CRC32C of everything before it.
 * Files are replaced by atomic rename, so a torn file is not expected; the CRC turns any other damage (a bad disk,
 * a stray writer) into a loud error instead of a wrong transaction state.
 */
final class TransactionMetadataCodec {
    private static final int MAGIC = 0x54584E31; // "TXN1"
    private static final byte VERSION = 1;
    /**
     * Version 1 followed by the next producer id: written only while a transaction whose epoch ran out is prepared,
     * so that an instance that knows only version 1 reads every other state.
     */
    private static final byte VERSION_WITH_NEXT_PRODUCER_ID = 2;

    private TransactionMetadataCodec() {
    }

    static byte[] encode(TransactionMetadata m) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
            DataOutputStream out = new DataOutputStream(bytes);
            boolean rotating = m.nextProducerId() != TransactionMetadata.NO_PRODUCER_ID;
            out.writeInt(MAGIC);
            out.writeByte(rotating ? VERSION_WITH_NEXT_PRODUCER_ID : VERSION);
            writeString(out, m.transactionalId());
            out.writeLong(m.producerId());
            out.writeLong(m.previousProducerId());
            out.writeShort(m.producerEpoch());
            out.writeShort(m.lastProducerEpoch());
            out.writeInt(m.timeoutMs());
            out.writeByte(m.state().ordinal());
            out.writeLong(m.startTimeMs());
            out.writeLong(m.lastUpdateMs());
            out.writeInt(m.partitions().size());
            for (TopicPartition tp : m.partitions()) {
                writePartition(out, tp);
            }
            out.writeInt(m.groups().size());
            for (String g : m.groups()) {
                writeString(out, g);
            }
            out.writeInt(m.pendingOffsets().size());
            for (Map.Entry<String, Map<TopicPartition, PendingOffset>> g : m.pendingOffsets().entrySet()) {
                writeString(out, g.getKey());
                out.writeInt(g.getValue().size());
                for (Map.Entry<TopicPartition, PendingOffset> o : g.getValue().entrySet()) {
                    writePartition(out, o.getKey());
                    out.writeLong(o.getValue().offset());
                    writeString(out, o.getValue().metadata());
                    out.writeInt(o.getValue().leaderEpoch());
                }
            }
            if (rotating) {
                out.writeLong(m.nextProducerId());
            }
            out.flush();
            CRC32C crc = new CRC32C();
            crc.update(bytes.toByteArray());
            out.writeInt((int) crc.getValue());
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
    }

    static TransactionMetadata decode(byte[] bytes) {
        if (bytes.length < 9) {
            throw new IllegalStateException("transaction state file too short: " + bytes.length + " bytes");
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        int stored = ((bytes[bytes.length - 4] & 0xff) << 24) | ((bytes[bytes.length - 3] & 0xff) << 16)
                | ((bytes[bytes.length - 2] & 0xff) << 8) | (bytes[bytes.length - 1] & 0xff);
        if ((int) crc.getValue() != stored) {
            throw new IllegalStateException("transaction state file fails its CRC");
        }
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes, 0, bytes.length - 4));
            if (in.readInt() != MAGIC) {
                throw new IllegalStateException("not a transaction state file");
            }
            byte version = in.readByte();
            if (version != VERSION && version != VERSION_WITH_NEXT_PRODUCER_ID) {
                throw new IllegalStateException("unknown transaction state file version " + version);
            }
            String id = readString(in);
            long producerId = in.readLong();
            long previousProducerId = in.readLong();
            short epoch = in.readShort();
            short lastEpoch = in.readShort();
            int timeoutMs = in.readInt();
            TxnState state = TxnState.values()[in.readByte()];
            long start = in.readLong();
            long lastUpdate = in.readLong();
            Set<TopicPartition> partitions = new LinkedHashSet<>();
            for (int i = in.readInt(); i > 0; i--) {
                partitions.add(readPartition(in));
            }
            Set<String> groups = new LinkedHashSet<>();
            for (int i = in.readInt(); i > 0; i--) {
                groups.add(readString(in));
            }
            Map<String, Map<TopicPartition, PendingOffset>> pending = new LinkedHashMap<>();
            for (int i = in.readInt(); i > 0; i--) {
                String group = readString(in);
                Map<TopicPartition, PendingOffset> offsets = new LinkedHashMap<>();
                for (int j = in.readInt(); j > 0; j--) {
                    offsets.put(readPartition(in), new PendingOffset(in.readLong(), readString(in), in.readInt()));
                }
                pending.put(group, offsets);
            }
            long nextProducerId = version == VERSION_WITH_NEXT_PRODUCER_ID ? in.readLong()
                    : TransactionMetadata.NO_PRODUCER_ID;
            return new TransactionMetadata(id, producerId, previousProducerId, epoch, lastEpoch, timeoutMs, state,
                    start, lastUpdate, partitions, groups, pending, nextProducerId);
        } catch (IOException e) {
            throw new IllegalStateException("truncated transaction state file", e);
        }
    }

    private static void writePartition(DataOutputStream out, TopicPartition tp) throws IOException {
        writeString(out, tp.topic());
        out.writeInt(tp.partition());
    }

    private static TopicPartition readPartition(DataInputStream in) throws IOException {
        return new TopicPartition(readString(in), in.readInt());
    }

    // Length-prefixed UTF-8 rather than writeUTF: ids and metadata may exceed writeUTF's 64 KiB of modified UTF-8.
    private static void writeString(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static String readString(DataInputStream in) throws IOException {
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }
}
