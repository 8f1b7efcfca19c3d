package io.tierlog.service.api;

import io.tierlog.http.Encoding;
import io.tierlog.log.BatchRead;
import io.tierlog.log.ErrorType;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.sharegroups.LeaseGrants;
import io.tierlog.sharegroups.LeaseWriter;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * The share-group lease answer (api.md, "Share groups": {@code {"records": [{"lease", "partition", "deliveryCount",
 * "offset", "timestamp", "key", "value", "headers"}], "ranges": [...]}}, ranges as in ADR 0042) rendered the way a
 * JSON fetch is ({@link JsonFetch}): straight from the stored batches ({@link PartitionReads#fetchBatches}, hot or cold) into this thread's {@link JsonOut},
 * each record exactly as a fetch renders it with the lease's fields spliced in front; no record objects, no
 * generator. Serves one lease call on one thread (the buffer is the thread's until {@link #finish}); not thread-safe.
 */
public final class LeaseAnswerJson implements LeaseWriter {
    /** Batch bytes per read; a lease of 500 records of 1 KiB takes one. */
    private static final int READ_BYTES = 8 * 1024 * 1024;
    private static final byte[] LEASE = ascii("\"lease\":\"");
    private static final byte[] PARTITION = ascii("\",\"partition\":");
    private static final byte[] DELIVERY_COUNT = ascii(",\"deliveryCount\":");
    private static final byte[] RANGES = ascii("],\"ranges\":[");
    private static final byte[] FIRST_OFFSET = ascii(",\"firstOffset\":");
    private static final byte[] LAST_OFFSET = ascii(",\"lastOffset\":");

    private final PartitionReads reads;
    private final JsonOut out;
    private int records;
    /** The runs of the records written so far (ADR 0042), rendered after the records. */
    private final List<Run> runs = new ArrayList<>();

    private record Run(byte[] lease, int partition, long firstOffset, long lastOffset, int deliveryCount) {
    }

    private LeaseAnswerJson(PartitionReads reads) {
        this.reads = reads;
        this.out = JsonOut.forThisThread();
        out.write(ascii("{\"records\":["));
    }

    /** Starts an answer in this thread's buffer (which the thread's next rendering reuses). */
    public static LeaseAnswerJson start(PartitionReads reads) {
        return new LeaseAnswerJson(reads);
    }

    @Override
    public int write(LeaseGrants grants, BitSet gone) {
        TopicPartition tp = grants.tp();
        Grants splice = new Grants(grants);
        StoredJson json = StoredJson.spliced(out, tp, Encoding.JSON, splice, records > 0);
        long from = grants.firstOffset();
        long last = grants.lastOffset();
        while (from <= last) {
            BatchRead batches;
            try {
                batches = reads.fetchBatches(tp, from, (int) Math.min(last - from + 1, 10_000), READ_BYTES).batches();
            } catch (TierlogException e) {
                if (e.type() == ErrorType.OFFSET_OUT_OF_RANGE) {
                    break; // removed by retention meanwhile: what is left is gone
                }
                throw e;
            }
            try (batches) {
                if (batches.isEmpty()) {
                    break;
                }
                json.add(batches.buffer(), from);
                from = batches.nextOffset();
            }
        }
        records += json.count();
        for (int i = splice.rendered.nextSetBit(0), j; i >= 0; i = splice.rendered.nextSetBit(j + 1)) {
            j = grants.runEnd(i, splice.rendered);
            runs.add(new Run(grants.rangeLeaseAscii(i, j), tp.partition(), grants.offset(i), grants.offset(j),
                    grants.deliveryCount(i)));
        }
        int missing = 0;
        for (int i = 0; i < grants.size(); i++) {
            if (!splice.rendered.get(i)) {
                gone.set(i); // removed by compaction or retention since it was appended
                missing++;
            }
        }
        return missing;
    }

    /** Closes the answer: the whole body, copied out of the thread's buffer. */
    public byte[] finish() {
        close();
        return out.toByteArray();
    }

    /**
     * Closes the answer: the whole body, copied once out of the thread's buffer into {@code memory} (pooled direct
     * memory the event loop writes to the socket as it is); the caller closes the buffer once it is written.
     */
    public ReadBuffer finish(ReadMemory memory) {
        close();
        ReadBuffer bytes = memory.allocate(out.size());
        out.copyTo(bytes.memory(), 0);
        return bytes;
    }

    /** Ends the records, then the runs: {@code "ranges": [{"lease", "partition", "firstOffset", "lastOffset", ...}]}. */
    private void close() {
        out.write(RANGES);
        for (int k = 0; k < runs.size(); k++) {
            Run r = runs.get(k);
            if (k > 0) {
                out.write(',');
            }
            out.write('{');
            out.write(LEASE);
            out.write(r.lease); // base64url: nothing to escape
            out.write(PARTITION);
            out.number(r.partition);
            out.write(FIRST_OFFSET);
            out.number(r.firstOffset);
            out.write(LAST_OFFSET);
            out.number(r.lastOffset);
            out.write(DELIVERY_COUNT);
            out.number(r.deliveryCount);
            out.write('}');
        }
        out.write(']');
        out.write('}');
    }

    /** Walks the grants (ascending) beside the records of the batches (ascending). */
    private static final class Grants implements StoredJson.Splice {
        private final LeaseGrants grants;
        private final BitSet rendered;
        private int at;

        Grants(LeaseGrants grants) {
            this.grants = grants;
            this.rendered = new BitSet(grants.size());
        }

        @Override
        public boolean wants(long offset) {
            while (at < grants.size() && grants.offset(at) < offset) {
                at++;
            }
            return at < grants.size() && grants.offset(at) == offset;
        }

        @Override
        public void fields(long offset, JsonOut o) {
            o.write(LEASE);
            o.write(grants.leaseAscii(at)); // base64url: nothing to escape
            o.write(PARTITION);
            o.number(grants.tp().partition());
            o.write(DELIVERY_COUNT);
            o.number(grants.deliveryCount(at));
            o.write(',');
            rendered.set(at);
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
