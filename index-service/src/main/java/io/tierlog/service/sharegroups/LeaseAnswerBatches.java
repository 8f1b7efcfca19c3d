package io.tierlog.service.sharegroups;

import io.tierlog.log.BatchRead;
import io.tierlog.log.ErrorType;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.sharegroups.LeaseGrants;
import io.tierlog.sharegroups.LeaseWriter;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * The share-group lease answer as leased record batches ({@link LeaseBatchesMedia}, docs/api.md "Share groups"): a
 * small header naming, per share-partition, each leased record's offset, delivery count and lease string, then the
 * stored Kafka RecordBatch v2 batches that hold those records, sent as stored (CRC-checked by the read, not
 * rewritten). This is what Kafka's ShareFetch answers (acquired offset ranges beside whole batches), and it spares
 * the per-record JSON rendering of {@code LeaseAnswerJson}: the service copies no record, the batches go from the
 * read's pooled direct memory to the socket.
 *
 * <p>In the leased-ranges form ({@link LeaseBatchesMedia#RANGES}, ADR 0042) the header names, per share-partition,
 * runs of consecutive leased records with one delivery count, each under one range lease, instead of one lease per
 * record.
 *
 * <p>Only batches holding at least one leased record are sent; a batch may hold records that are not leased (the
 * client delivers only the offsets the header names). Serves one lease call on one thread; not thread-safe. The
 * batches are held from {@link #write} until the answer is written ({@link Answer#close}) or {@link #abandon}ed.
 */
final class LeaseAnswerBatches implements LeaseWriter {
    /** Batch bytes per read, as the JSON answer reads them. */
    private static final int READ_BYTES = 8 * 1024 * 1024;

    private final PartitionReads reads;
    private final boolean ranges;
    private final List<Section> sections = new ArrayList<>();
    private final List<BatchRead> held = new ArrayList<>();

    /**
     * One share-partition's part: its leased records (those still stored) as entries, and the batch bytes that hold
     * them. An entry is one record ({@code counts} null) or, in the ranges form, a run of {@code counts[i]} records
     * from {@code offsets[i]} under one range lease.
     */
    private record Section(int partition, long[] offsets, int[] counts, int[] deliveryCounts, byte[][] leases,
                           int entries, List<ByteBuffer> batches, int batchBytes) {
    }

    /** The leased-batches answer: one lease per record. */
    LeaseAnswerBatches(PartitionReads reads) {
        this(reads, false);
    }

    /**
     * @param ranges the leased-ranges answer ({@link LeaseBatchesMedia#RANGES}): runs under range leases (ADR 0042)
     *               instead of one lease per record
     */
    LeaseAnswerBatches(PartitionReads reads, boolean ranges) {
        this.reads = reads;
        this.ranges = ranges;
    }

    @Override
    public int write(LeaseGrants grants, BitSet gone) {
        TopicPartition tp = grants.tp();
        int n = grants.size();
        BitSet present = new BitSet(n);
        List<ByteBuffer> slices = new ArrayList<>();
        List<BatchRead> mine = new ArrayList<>();
        int batchBytes = 0;
        try {
            int next = 0; // the first grant not yet looked for
            while (next < n) {
                long from = grants.offset(next);
                BatchRead read;
                try {
                    // From the next grant on: the stretches between grants (records done, or leased to others) are
                    // not read at all.
                    read = reads.fetchBatches(tp, from, (int) Math.min(grants.lastOffset() - from + 1, 10_000),
                            READ_BYTES).batches();
                } catch (TierlogException e) {
                    if (e.type() == ErrorType.OFFSET_OUT_OF_RANGE) {
                        break; // removed by retention meanwhile: what is left is gone
                    }
                    throw e;
                }
                if (read.isEmpty()) {
                    read.close();
                    break;
                }
                mine.add(read);
                ByteBuffer buffer = read.buffer().order(ByteOrder.BIG_ENDIAN);
                int runStart = -1;
                int at = buffer.position();
                while (at < buffer.limit()) {
                    int size = RecordBatchCodec.LOG_OVERHEAD + buffer.getInt(at + RecordBatchCodec.LENGTH_OFFSET);
                    ByteBuffer batch = buffer.slice(at, size);
                    int before = present.cardinality();
                    next = mark(batch, grants, next, present);
                    boolean wanted = present.cardinality() > before;
                    if (wanted && runStart < 0) {
                        runStart = at;
                    } else if (!wanted && runStart >= 0) {
                        slices.add(buffer.slice(runStart, at - runStart));
                        batchBytes += at - runStart;
                        runStart = -1;
                    }
                    at += size;
                }
                if (runStart >= 0) {
                    slices.add(buffer.slice(runStart, at - runStart));
                    batchBytes += at - runStart;
                }
                // Grants below the read's end that were not found are gone (compacted away).
                while (next < n && grants.offset(next) < read.nextOffset()) {
                    next++;
                }
            }
        } catch (RuntimeException e) {
            mine.forEach(BatchRead::close);
            throw e;
        }
        int records = present.cardinality();
        if (records == 0) {
            mine.forEach(BatchRead::close);
        } else if (ranges) {
            held.addAll(mine);
            List<int[]> found = new ArrayList<>();
            for (int i = present.nextSetBit(0), j; i >= 0; i = present.nextSetBit(j + 1)) {
                j = grants.runEnd(i, present);
                found.add(new int[]{i, j});
            }
            int runs = found.size();
            long[] offsets = new long[runs];
            int[] counts = new int[runs];
            int[] deliveryCounts = new int[runs];
            byte[][] leases = new byte[runs][];
            for (int k = 0; k < runs; k++) {
                int i = found.get(k)[0];
                int j = found.get(k)[1];
                offsets[k] = grants.offset(i);
                counts[k] = j - i + 1;
                deliveryCounts[k] = grants.deliveryCount(i);
                leases[k] = grants.rangeLeaseAscii(i, j);
            }
            sections.add(new Section(tp.partition(), offsets, counts, deliveryCounts, leases, runs, slices,
                    batchBytes));
        } else {
            held.addAll(mine);
            long[] offsets = new long[records];
            int[] deliveryCounts = new int[records];
            byte[][] leases = new byte[records][];
            int k = 0;
            for (int i = present.nextSetBit(0); i >= 0; i = present.nextSetBit(i + 1)) {
                offsets[k] = grants.offset(i);
                deliveryCounts[k] = grants.deliveryCount(i);
                leases[k] = grants.leaseAscii(i);
                k++;
            }
            sections.add(new Section(tp.partition(), offsets, null, deliveryCounts, leases, records, slices,
                    batchBytes));
        }
        int missing = 0;
        for (int i = 0; i < n; i++) {
            if (!present.get(i)) {
                gone.set(i); // removed by compaction or retention since it was appended
                missing++;
            }
        }
        return missing;
    }

    /**
     * Marks the grants from {@code next} on that {@code batch} holds; returns the first grant beyond the batch. A
     * batch whose record count fills its offset range holds every offset in it; any other (compacted) is decoded.
     */
    private static int mark(ByteBuffer batch, LeaseGrants grants, int next, BitSet present) {
        long base = batch.getLong(0);
        int lastDelta = batch.getInt(RecordBatchCodec.LAST_OFFSET_DELTA_OFFSET);
        long last = base + lastDelta;
        int count = batch.getInt(RecordBatchCodec.RECORD_COUNT_OFFSET);
        int n = grants.size();
        while (next < n && grants.offset(next) < base) {
            next++; // below this batch and not in the one before: gone
        }
        if (next >= n || grants.offset(next) > last) {
            return next;
        }
        if (count == lastDelta + 1) {
            while (next < n && grants.offset(next) <= last) {
                present.set(next++);
            }
            return next;
        }
        List<LogRecord> records = new ArrayList<>();
        RecordBatchCodec.decode(batch.duplicate(), base, Integer.MAX_VALUE, records);
        int r = 0;
        while (next < n && grants.offset(next) <= last) {
            long offset = grants.offset(next);
            while (r < records.size() && records.get(r).offset() < offset) {
                r++;
            }
            if (r < records.size() && records.get(r).offset() == offset) {
                present.set(next);
            }
            next++;
        }
        return next;
    }

    /**
     * The answer: the header in {@code memory}, then the held batches, as buffers for one gathering write. The caller
     * closes the answer once written (it gives back the header's and the batches' memory).
     */
    Answer finish(ReadMemory memory) {
        try {
            return answer(memory);
        } catch (RuntimeException e) {
            abandon();
            throw e;
        }
    }

    private Answer answer(ReadMemory memory) {
        int headerBytes = 4;
        for (Section s : sections) {
            headerBytes += 4 + 4 + 4;
            for (byte[] lease : s.leases) {
                headerBytes += 8 + (s.counts != null ? 4 : 0) + 4 + 2 + lease.length;
            }
        }
        ReadBuffer header = memory.allocate(headerBytes);
        ByteBuffer h = header.memory().duplicate().order(ByteOrder.BIG_ENDIAN);
        h.clear();
        h.putInt(sections.size());
        List<ByteBuffer> parts = new ArrayList<>();
        for (Section s : sections) {
            h.putInt(s.partition);
            h.putInt(s.entries);
            for (int i = 0; i < s.entries; i++) {
                h.putLong(s.offsets[i]);
                if (s.counts != null) {
                    h.putInt(s.counts[i]);
                }
                h.putInt(s.deliveryCounts[i]);
                h.putShort((short) s.leases[i].length);
                h.put(s.leases[i]);
            }
            h.putInt(s.batchBytes);
            parts.addAll(s.batches);
        }
        parts.add(0, header.memory().slice(0, headerBytes));
        List<Runnable> owned = new ArrayList<>();
        held.forEach(read -> owned.add(read::close));
        owned.add(header::close);
        held.clear();
        return new Answer(parts, owned);
    }

    /** Gives back the batches held (a lease that failed, or is not answered). */
    void abandon() {
        held.forEach(BatchRead::close);
        held.clear();
    }

    /** The answer's bytes in order, and the memory they lie in, given back by {@link #close}. */
    record Answer(List<ByteBuffer> parts, List<Runnable> owned) implements AutoCloseable {
        @Override
        public void close() {
            owned.forEach(Runnable::run);
        }
    }
}
