package io.tierlog.log.internal.txn;

import io.tierlog.log.io.AtomicFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Drops from a partition's transaction index the transactions that ended below an offset: once the hot segments
 * below {@code below} are gone, no hot read, recovery or tiering looks at those transactions again (a cold read
 * finds its aborted ones in the cold segments' sidecars). What is kept, in its order: every open transaction's
 * BEGIN, and the BEGIN and END of every transaction whose END is at or above {@code below}.
 *
 * <p>The caller holds the partition writer's lock (the index is appended under it). The file is replaced atomically
 * ({@link AtomicFiles#replace}: temp file, fsync, rename, directory fsync), so a lock-free reader sees the old file or
 * the new one; readers and writers notice the replacement ({@link TxnIndexState#continuesIn}, the inode).
 */
public final class TxnIndexTrim {
    private TxnIndexTrim() {
    }

    /**
     * Trims {@code file} below {@code below}; does nothing (no write) when nothing ended below it, or when the file
     * has a torn or damaged entry: the next writer repairs or refuses that, and a later trim trims.
     *
     * @return how many entries were dropped
     */
    public static int trim(Path file, long below) throws IOException {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return 0;
        }
        if (bytes.length % TxnIndexEntry.SIZE != 0) {
            return 0;
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        List<TxnIndexEntry> entries = new ArrayList<>(bytes.length / TxnIndexEntry.SIZE);
        for (int at = 0; at < bytes.length; at += TxnIndexEntry.SIZE) {
            TxnIndexEntry entry = TxnIndexEntry.decode(buf, at);
            if (entry == null) {
                return 0;
            }
            entries.add(entry);
        }
        boolean[] drop = endedBelow(entries, below);
        ByteBuffer kept = ByteBuffer.allocate(bytes.length);
        int dropped = 0;
        for (int i = 0; i < entries.size(); i++) {
            if (drop[i]) {
                dropped++;
            } else {
                kept.put(buf.slice(i * TxnIndexEntry.SIZE, TxnIndexEntry.SIZE));
            }
        }
        if (dropped > 0) {
            byte[] out = new byte[kept.position()];
            kept.flip().get(out);
            AtomicFiles.replace(file, out);
        }
        return dropped;
    }

    /**
     * Marks the entries of transactions whose END lies below {@code below}: the END, and every BEGIN of its producer
     * since that producer's previous END (a second BEGIN while one is open belongs to the same transaction).
     */
    static boolean[] endedBelow(List<TxnIndexEntry> entries, long below) {
        boolean[] drop = new boolean[entries.size()];
        Map<Long, List<Integer>> openBegins = new HashMap<>();
        for (int i = 0; i < entries.size(); i++) {
            TxnIndexEntry e = entries.get(i);
            if (e.isBegin()) {
                openBegins.computeIfAbsent(e.producerId(), k -> new ArrayList<>()).add(i);
                continue;
            }
            List<Integer> begins = openBegins.remove(e.producerId());
            if (e.offset() < below) {
                drop[i] = true;
                if (begins != null) {
                    begins.forEach(b -> drop[b] = true);
                }
            }
        }
        return drop;
    }
}
