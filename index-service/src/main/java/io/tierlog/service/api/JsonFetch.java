package io.tierlog.service.api;

import io.tierlog.http.Encoding;
import io.tierlog.http.Isolation;
import io.tierlog.log.BatchRead;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.read.BatchFetch;
import io.tierlog.service.read.CommittedFetch;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.PartitionReads;

import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * The JSON fetch body (api.md, "Fetch") rendered from the stored batches ({@link PartitionReads#fetchBatches}) into
 * this thread's {@link JsonOut}: the same records, {@code nextOffset} and bounds as a record fetch
 * ({@link PartitionReads#fetch}) answers, without decoding a record into objects.
 *
 * <p>A batch read stops by batch bytes, a JSON fetch by its records' sizes, so when the batches read hold fewer
 * records than the limits allow, the next batches are read on from where they ended, until the limits or the end
 * of the log are reached. Each read's memory is given back as soon as its records are rendered. Thread-safe
 * (state is per call and per thread).
 */
final class JsonFetch {
    private JsonFetch() {
    }

    /**
     * What {@link #render} wrote into {@code out}: a whole fetch body of {@code records} records ending at
     * {@code nextOffset}. When it holds none and did not move past the offset asked for, a long-poll waits for the
     * log to grow past {@code waitBeyond}: that offset itself, or, for a read_committed reader an open transaction
     * holds back, the high watermark it read (only an append above it can end the transaction).
     */
    record Rendered(JsonOut out, int records, long nextOffset, long waitBeyond) {
        /** Whether the answer tells its reader something new: records, or a next offset past the one asked for. */
        boolean progressed(long offset) {
            return records > 0 || nextOffset > offset;
        }
    }

    /**
     * A JSON fetch with its long-poll ({@link PartitionRequests#longPoll}), called on {@code pool}: each read renders,
     * then {@code copyOut} takes the body out of this thread's buffer on the same thread (given the read's start, for
     * the fetch timer); the read that answers is returned, the others go to {@code discard}.
     */
    static <T> CompletableFuture<T> fetchAndWait(PartitionReads reads, AppendWatcher watcher, TopicStore topics,
                                                 String topic, String partition, FetchParams params, Encoding encoding,
                                                 Clock clock, Executor pool, BiFunction<Rendered, Long, T> copyOut,
                                                 Consumer<T> discard) {
        TopicPartition tp = PartitionRequests.resolve(topics, topic, partition);
        Copied<T> first = copied(render(reads, tp, params, encoding), params, copyOut);
        if (first.waitBeyond() < 0 || params.waitMs() == 0) {
            return CompletableFuture.completedFuture(first.body());
        }
        return PartitionRequests.longPoll(watcher, topics, tp, first, params.waitMs(), clock, pool,
                () -> copied(render(reads, PartitionRequests.resolve(topics, topic, partition), params, encoding),
                        params, copyOut),
                Copied::waitBeyond, c -> discard.accept(c.body())).thenApply(Copied::body);
    }

    private static Rendered render(PartitionReads reads, TopicPartition tp, FetchParams params, Encoding encoding) {
        return render(reads, tp, params.offset(), params.maxRecords(), params.maxBytes(), encoding, params.isolation());
    }

    private static <T> Copied<T> copied(Rendered r, FetchParams params, BiFunction<Rendered, Long, T> copyOut) {
        long start = System.nanoTime();
        return new Copied<>(copyOut.apply(r, start), r.progressed(params.offset()) ? -1 : r.waitBeyond());
    }

    /** A body copied out, and where the log must grow past before a long-poll reads again (-1: it found something). */
    private record Copied<T>(T body, long waitBeyond) {
    }

    /**
     * Renders the fetch from {@code offset} into this thread's {@link JsonOut} (valid until the thread renders
     * again).
     *
     * @throws io.tierlog.log.TierlogException as {@link PartitionReads#fetchBatches} (offset-out-of-range, ...)
     */
    static Rendered render(PartitionReads reads, TopicPartition tp, long offset, int maxRecords, int maxBytes,
                           Encoding encoding, Isolation isolation) {
        Read read = Read.of(reads, tp, offset, maxRecords, maxBytes, isolation);
        JsonOut out = JsonOut.forThisThread();
        StoredJson json = StoredJson.body(out, tp, encoding, maxRecords, maxBytes);
        long highWatermark = read.fetch.highWatermark();
        long logStartOffset = read.fetch.logStartOffset();
        long from = offset;
        // Everything below it was read through: rendered, or holding no record a reader sees (markers, batches
        // emptied by compaction, aborted transactions at read_committed).
        long readThrough = offset;
        boolean full;
        while (true) {
            long readTo;
            try (BatchRead batches = read.fetch.batches()) {
                readTo = batches.nextOffset();
                full = !batches.isEmpty() && json.add(batches.buffer(), from);
            }
            highWatermark = Math.max(highWatermark, read.fetch.highWatermark());
            if (full || readTo <= from) {
                break;
            }
            from = readTo;
            readThrough = readTo;
            try {
                read = Read.of(reads, tp, from, Math.max(1, maxRecords - json.count()), maxBytes, isolation);
            } catch (RuntimeException e) {
                if (json.count() == 0 && readThrough == offset) {
                    throw e;
                }
                break;   // e.g. retention overtook the read meanwhile: answer what was read so far
            }
        }
        // Full: the offset after the last record returned. Otherwise everything read was passed, so a reader at a
        // marker or an emptied batch moves on rather than asking for the same offset again.
        long nextOffset = full ? json.lastOffset() + 1
                : Math.max(readThrough, json.count() == 0 ? offset : json.lastOffset() + 1);
        long hw = Math.max(highWatermark, nextOffset);
        if (isolation == Isolation.READ_COMMITTED) {
            json.finishBody(nextOffset, hw, read.lastStableOffset, logStartOffset);
        } else {
            json.finishBody(nextOffset, hw, logStartOffset);
        }
        boolean heldBack = isolation == Isolation.READ_COMMITTED && read.lastStableOffset < hw;
        return new Rendered(out, json.count(), nextOffset, heldBack ? hw : offset);
    }

    /** One read of the loop above and the last stable offset it saw (the high watermark at read_uncommitted). */
    private record Read(BatchFetch fetch, long lastStableOffset) {
        static Read of(PartitionReads reads, TopicPartition tp, long offset, int maxRecords, int maxBytes,
                       Isolation isolation) {
            if (isolation == Isolation.READ_COMMITTED) {
                CommittedFetch c = reads.fetchCommitted(tp, offset, maxRecords, maxBytes);
                return new Read(c.fetch(), c.lastStableOffset());
            }
            BatchFetch f = reads.fetchBatches(tp, offset, maxRecords, maxBytes);
            return new Read(f, f.highWatermark());
        }
    }
}
