package io.tierlog.http;

import io.tierlog.ingest.EncodedProduce;
import io.tierlog.ingest.Partitioner;
import io.tierlog.ingest.ProduceRecord;
import io.tierlog.ingest.ProduceRequest;
import io.tierlog.log.TierlogException;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicMetadata;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reference for {@link ProduceBodyEncoder}: what the old path makes of a body ({@link ProduceRequestParser},
 * then IngestService's partitioning and checks, then {@link RecordBatchCodec#encode} through kafka-clients), as
 * batches at base offset 0, next to what the one-pass encoder makes of it. Shared by the unit test and the fuzz
 * target.
 */
final class ReferenceBatches {
    static final long NOW = 1_700_000_000_000L;
    static final int UNKEYED_PARTITION = 2;
    static final TopicMetadata TOPIC = new TopicMetadata("t", new UUID(1, 2), 4,
            TopicConfig.DEFAULTS.with(Map.of(TopicConfig.MAX_MESSAGE_BYTES, 2000)), 0);
    private static final ProduceRequestParser PARSER = new ProduceRequestParser();

    private ReferenceBatches() {
    }

    /** Partition → batch bytes and the partition of every record, or empty when the old path refuses the body. */
    record Batches(Map<Integer, ByteBuffer> batches, List<Integer> partitionOf) {
    }

    static Optional<Batches> reference(byte[] body) {
        ProduceRequest request;
        try {
            request = PARSER.parse(body);
        } catch (TierlogException refused) {
            return Optional.empty();
        }
        List<Integer> partitionOf = new ArrayList<>();
        Map<Integer, List<AppendRecord>> byPartition = new TreeMap<>();
        for (ProduceRecord r : request.records()) {
            int p;
            if (r.partition() != null) {
                if (r.partition() >= TOPIC.partitions()) {
                    return Optional.empty();   // unknown-partition
                }
                p = r.partition();
            } else if (r.key() != null) {
                p = Partitioner.forKey(r.key(), TOPIC.partitions());
            } else {
                p = UNKEYED_PARTITION;
            }
            AppendRecord a = new AppendRecord(r.key(), r.value(), r.headers(), r.timestamp() == null ? NOW : r.timestamp());
            if (a.payloadBytes() > TOPIC.config().maxMessageBytes()) {
                return Optional.empty();   // record-too-large
            }
            partitionOf.add(p);
            byPartition.computeIfAbsent(p, k -> new ArrayList<>()).add(a);
        }
        Map<Integer, ProducerIdentity> identities;
        try {
            identities = request.producer().map(ref -> ref.identities(byPartition.keySet())).orElse(Map.of());
        } catch (TierlogException refused) {
            return Optional.empty();
        }
        Map<Integer, ByteBuffer> batches = new TreeMap<>();
        byPartition.forEach((p, records) -> batches.put(p, RecordBatchCodec.encode(0, records,
                identities.getOrDefault(p, ProducerIdentity.NONE))));
        return Optional.of(new Batches(batches, partitionOf));
    }

    /** The one-pass encoder's batches, or empty when it declines the body. */
    static Optional<Batches> onePass(byte[] body) {
        return onePass(body, body.length);
    }

    /**
     * The one-pass encoder's batches of the body {@code array[0, length)}, or empty when it declines it; the array
     * may be longer (pooled memory the body was read into).
     */
    static Optional<Batches> onePass(byte[] array, int length) {
        int[] calls = {0};
        try (ProduceBodyEncoder.Encoded encoded = ProduceBodyEncoder.encode(array, length, TOPIC, NOW, producer -> {
            calls[0]++;
            return UNKEYED_PARTITION;
        })) {
            assertThat(calls[0]).as("the unkeyed partition is asked for at most once").isLessThanOrEqualTo(1);
            if (encoded == null) {
                return Optional.empty();
            }
            EncodedProduce request = encoded.request();
            Map<Integer, ByteBuffer> batches = new TreeMap<>();
            for (EncodedProduce.Batch b : request.batches()) {
                ByteBuffer copy = ByteBuffer.allocate(b.bytes().remaining());
                copy.put(b.bytes().duplicate()).flip();
                batches.put(b.partition(), copy);
                assertThat(b.recordCount()).isEqualTo(copy.getInt(RecordBatchCodec.RECORD_COUNT_OFFSET));
            }
            List<Integer> partitionOf = new ArrayList<>();
            for (int p : request.partitionOf()) {
                partitionOf.add(p);
            }
            return Optional.of(new Batches(batches, partitionOf));
        }
    }

    /**
     * The one-pass encoder either declines the body or makes exactly the reference's batches; it never accepts a
     * body the old path refuses. Returns whether it encoded the body.
     */
    static boolean assertSameAsReference(byte[] body) {
        Optional<Batches> reference = reference(body);
        Optional<Batches> onePass = onePass(body);
        // The same body at the start of a longer array whose stale bytes would end strings, objects and the body
        // early if they were read (a pooled array the body was read into): the same answer, byte for byte.
        Optional<Batches> inLongerArray = onePass(withStaleTail(body), body.length);
        assertThat(inLongerArray.isPresent()).as("encoded in a longer array as on its own").isEqualTo(onePass.isPresent());
        if (onePass.isEmpty()) {
            return false;
        }
        assertThat(inLongerArray.get().partitionOf()).isEqualTo(onePass.get().partitionOf());
        onePass.get().batches().forEach((p, batch) -> assertThat(bytes(inLongerArray.get().batches().get(p)))
                .as("partition %d's batch from a longer array", p).isEqualTo(bytes(batch)));
        assertThat(reference).as("a body the old path refuses is never encoded").isPresent();
        assertThat(onePass.get().partitionOf()).isEqualTo(reference.get().partitionOf());
        assertThat(onePass.get().batches().keySet()).isEqualTo(reference.get().batches().keySet());
        reference.get().batches().forEach((p, batch) -> assertThat(bytes(onePass.get().batches().get(p)))
                .as("partition %d's batch", p).isEqualTo(bytes(batch)));
        return true;
    }

    /** {@code body} followed by bytes that close strings, objects and arrays, as a reused array may hold. */
    static byte[] withStaleTail(byte[] body) {
        byte[] stale = "\"}]\" ,{\"value\":1}]}\"\\".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        byte[] array = java.util.Arrays.copyOf(body, body.length + 64);
        for (int i = body.length; i < array.length; i++) {
            array[i] = stale[(i - body.length) % stale.length];
        }
        return array;
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}
