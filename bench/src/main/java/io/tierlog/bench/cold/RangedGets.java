package io.tierlog.bench.cold;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectStore;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The raw baselines of a cold replay: ranged GETs of the segment objects, in offset order, in chunks of
 * {@code chunkBytes} (the chunking the ColdReader uses: chunk {@code i} is bytes {@code [i*chunk, (i+1)*chunk)}
 * of the object, the last one shorter), through an {@link ObjectStore} ({@code S3ObjectStore}: the AWS SDK v2
 * with the url-connection client, as in the index-service). Bytes are received and dropped: no CRC check, no
 * decoding, no cache write. Thread-safe; each call uses its own threads.
 */
final class RangedGets {
    /** A segment object and its size. */
    record Segment(ObjectKey key, long size) {
    }

    private RangedGets() {
    }

    /**
     * All chunks of all segments with up to {@code inFlight} GETs at a time, queued in offset order (a thread pool
     * of that size). {@code inFlight == 1} is the serial reader: one GET at a time. Time to first: until the first
     * chunk's GET completed.
     */
    static Replay read(ObjectStore store, List<Segment> segments, int chunkBytes, int inFlight) throws Exception {
        long total = segments.stream().mapToLong(Segment::size).sum();
        ExecutorService pool = Executors.newFixedThreadPool(inFlight);
        try {
            List<Future<Long>> gets = new ArrayList<>();
            long start = System.nanoTime();
            for (Segment s : segments) {
                for (long off = 0; off < s.size(); off += chunkBytes) {
                    ByteRange range = ByteRange.of(off, Math.min(chunkBytes, s.size() - off));
                    gets.add(pool.submit(() -> {
                        byte[] bytes = store.getRange(s.key(), range);
                        if (bytes.length != range.length()) {
                            throw new IllegalStateException("GET " + s.key() + " " + range + " returned "
                                    + bytes.length + " bytes");
                        }
                        return System.nanoTime();
                    }));
                }
            }
            long first = gets.get(0).get() - start;
            for (Future<Long> f : gets) {
                f.get();
            }
            return new Replay(System.nanoTime() - start, first, 0, 0, total);
        } finally {
            pool.shutdownNow();
        }
    }
}
