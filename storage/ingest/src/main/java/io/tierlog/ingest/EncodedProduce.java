package io.tierlog.ingest;

import io.tierlog.log.format.ProducerIdentity;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;

/**
 * A produce request that an edge has already parsed into its record batches, one per partition it touches (the
 * JSON edge's one-pass parser, io.tierlog.http): nothing is left to decode, partition or encode, only to append.
 *
 * @param batches         one per partition, in ascending partition order, each finished with that partition's
 *                        producer fields (its bytes must not change until the append returns)
 * @param partitionOf     the partition of each record, in request order (for the answer's offsets)
 * @param producer        the request's producer fields, if any (problem details name its id)
 */
public record EncodedProduce(List<Batch> batches, int[] partitionOf, Optional<ProducerRef> producer) {

    /** One partition's batch: {@code recordCount} records, header fields from {@code producer}. */
    public record Batch(int partition, ByteBuffer bytes, int recordCount, ProducerIdentity producer) {
    }
}
