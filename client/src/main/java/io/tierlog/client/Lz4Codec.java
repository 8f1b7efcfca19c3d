package io.tierlog.client;

import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * LZ4 as Kafka frames it (its {@code Lz4BlockOutputStream} for magic 2): the LZ4 frame format with independent
 * 64 KiB blocks, no block or content checksum, a correct header checksum; a block that does not shrink is stored
 * raw. Reading also accepts the optional frame fields (content size, checksums) other writers set. Loaded only
 * when used.
 */
final class Lz4Codec {
    private static final int MAGIC = 0x184D2204;
    private static final int BLOCK_BYTES = 64 * 1024;
    private static final int FLG_VERSION = 0x40;
    private static final int FLG_BLOCK_INDEPENDENT = 0x20;
    private static final int FLG_BLOCK_CHECKSUM = 0x10;
    private static final int FLG_CONTENT_SIZE = 0x08;
    private static final int FLG_CONTENT_CHECKSUM = 0x04;
    private static final int BD_64KB = 4 << 4;
    private static final int UNCOMPRESSED = 0x80000000;
    private static final LZ4Compressor COMPRESSOR = LZ4Factory.fastestInstance().fastCompressor();
    private static final LZ4SafeDecompressor DECOMPRESSOR = LZ4Factory.fastestInstance().safeDecompressor();
    private static final XXHash32 XXHASH = XXHashFactory.fastestInstance().hash32();

    private Lz4Codec() {
    }

    static byte[] compress(byte[] data, int length) {
        int blocks = Math.max(1, (length + BLOCK_BYTES - 1) / BLOCK_BYTES);
        ByteBuffer out = ByteBuffer.allocate(7 + blocks * (4 + COMPRESSOR.maxCompressedLength(BLOCK_BYTES)) + 4)
                .order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(MAGIC);
        out.put((byte) (FLG_VERSION | FLG_BLOCK_INDEPENDENT));
        out.put((byte) BD_64KB);
        out.put((byte) ((XXHASH.hash(out.array(), 4, 2, 0) >> 8) & 0xFF));
        byte[] scratch = new byte[COMPRESSOR.maxCompressedLength(BLOCK_BYTES)];
        for (int from = 0; from < length; from += BLOCK_BYTES) {
            int n = Math.min(BLOCK_BYTES, length - from);
            int c = COMPRESSOR.compress(data, from, n, scratch, 0, scratch.length);
            if (c >= n) {
                out.putInt(n | UNCOMPRESSED).put(data, from, n);
            } else {
                out.putInt(c).put(scratch, 0, c);
            }
        }
        out.putInt(0); // end mark
        byte[] result = new byte[out.position()];
        System.arraycopy(out.array(), 0, result, 0, result.length);
        return result;
    }

    static byte[] decompress(byte[] body, int offset, int length) {
        ByteBuffer in = ByteBuffer.wrap(body, offset, length).order(ByteOrder.LITTLE_ENDIAN);
        if (in.getInt() != MAGIC) {
            throw new IllegalArgumentException("not an LZ4 frame");
        }
        int flg = in.get() & 0xFF;
        int bd = in.get() & 0xFF;
        if ((flg & 0xC0) != FLG_VERSION || (flg & FLG_BLOCK_INDEPENDENT) == 0) {
            throw new IllegalArgumentException("LZ4 frame flags " + flg + ": version 1 with independent blocks expected");
        }
        int maxBlock = 1 << (2 * ((bd >> 4) & 7) + 8);
        if ((flg & FLG_CONTENT_SIZE) != 0) {
            in.position(in.position() + 8);
        }
        in.get(); // header checksum
        ByteArrayOutputStream out = new ByteArrayOutputStream(length * 3);
        byte[] block = new byte[maxBlock];
        while (true) {
            int size = in.getInt();
            if (size == 0) {
                break;
            }
            int n = size & ~UNCOMPRESSED;
            if (n > maxBlock || n > in.remaining()) {
                throw new IllegalArgumentException("LZ4 block of " + n + " bytes overruns its frame");
            }
            if ((size & UNCOMPRESSED) != 0) {
                out.write(body, in.position(), n);
            } else {
                int d = DECOMPRESSOR.decompress(body, in.position(), n, block, 0, maxBlock);
                out.write(block, 0, d);
            }
            in.position(in.position() + n + ((flg & FLG_BLOCK_CHECKSUM) != 0 ? 4 : 0));
        }
        return out.toByteArray();
    }
}
