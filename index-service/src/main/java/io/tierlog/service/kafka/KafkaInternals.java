package io.tierlog.service.kafka;

import io.tierlog.log.BatchSlice;
import io.tierlog.service.read.BatchFetch;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordsSend;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;
import org.apache.kafka.common.security.token.delegation.internals.DelegationTokenCredentialCallback;
import org.apache.kafka.common.utils.internals.BufferSupplier;

import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.sasl.SaslServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.security.NoSuchAlgorithmException;
import java.util.Map;

/**
 * The listener's one door into kafka-clients' internal packages, which change without notice between releases, and
 * why it needs one. Record batches: since Kafka 4 every record class is internal ({@code record.internal}), yet the
 * public Produce and Fetch message classes carry their batches as {@code BaseRecords}, and nothing public wraps or
 * unwraps a buffer of them. The classic group protocol: a consumer's subscription and assignment travel as bytes
 * in the "consumer" embedded format, which only {@code consumer.internals.ConsumerProtocol} reads and writes. SCRAM:
 * the server side of the exchange and the key derivation are {@code security.scram.internals}' only. Pushed client
 * metrics (KIP-714) are compressed with a record codec, whose type and buffers are internal too. The
 * rest of the listener handles plain {@link ByteBuffer}s and the public assignor types; a kafka-clients upgrade
 * that moves these classes breaks this file only (LayeringTest keeps it so). Stateless.
 */
final class KafkaInternals {
    /** The protocol type of a classic consumer group ("consumer"). */
    static final String CONSUMER_PROTOCOL_TYPE = ConsumerProtocol.PROTOCOL_TYPE;

    private KafkaInternals() {
    }

    /** The record bytes a Produce request carries (what the produce quota charges). */
    static long recordBytes(org.apache.kafka.common.message.ProduceRequestData request) {
        long bytes = 0;
        for (var t : request.topicData()) {
            for (var p : t.partitionData()) {
                bytes += sizeOf(p.records());
            }
        }
        return bytes;
    }

    /** The record bytes a Fetch answer carries (what the fetch quota charges). */
    static long recordBytes(org.apache.kafka.common.message.FetchResponseData response) {
        long bytes = 0;
        for (var t : response.responses()) {
            for (var p : t.partitions()) {
                bytes += sizeOf(p.records());
            }
        }
        return bytes;
    }

    /** The record bytes a ShareFetch answer carries (what the fetch quota charges). */
    static long recordBytes(org.apache.kafka.common.message.ShareFetchResponseData response) {
        long bytes = 0;
        for (var t : response.responses()) {
            for (var p : t.partitions()) {
                bytes += sizeOf(p.records());
            }
        }
        return bytes;
    }

    private static long sizeOf(BaseRecords records) {
        return records == null ? 0 : records.sizeInBytes();
    }

    /** The records of a partition answered with no batches. */
    static BaseRecords noRecords() {
        return MemoryRecords.EMPTY;
    }

    /** Stored batches, back to back, as a Fetch response's records (no copy). */
    static BaseRecords records(ByteBuffer batches) {
        return MemoryRecords.readableRecords(batches);
    }

    /**
     * Batches in a segment file as a Fetch response's records, not read: the message classes size the field by
     * {@link BatchSlice#sentLength()}, and {@link Frames#gathering} sends the range with {@code sendfile} in its place.
     */
    static BaseRecords records(BatchSlice slice) {
        return new SliceRecords(slice);
    }

    /** A read's batches as a response's records: its file range when it has one, else the buffers it was read into. */
    static BaseRecords records(BatchFetch read) {
        return read.slice() != null ? records(read.slice()) : records(read.batches().buffer());
    }

    /**
     * A message writer that hands a records field made by {@link #records(BatchSlice)} to {@link #writeSlice}
     * instead of writing bytes (the message classes would refuse records that are not in memory); other records
     * are written as by {@link ByteBufferAccessor}. Not thread-safe.
     */
    abstract static class SliceWriter extends ByteBufferAccessor {
        SliceWriter(ByteBuffer buffer) {
            super(buffer);
        }

        /** Takes the place of the slice's {@code sentLength} bytes in the output. */
        protected abstract void writeSlice(BatchSlice slice);

        @Override
        public void writeRecords(BaseRecords records) {
            if (records instanceof SliceRecords s) {
                writeSlice(s.slice);
            } else {
                super.writeRecords(records);
            }
        }
    }

    /** Records that are a file range; only {@link Frames} writes them (there is no {@code Send} of them). */
    private record SliceRecords(BatchSlice slice) implements BaseRecords {
        @Override
        public int sizeInBytes() {
            return slice.sentLength();
        }

        @Override
        public RecordsSend<? extends BaseRecords> toSend() {
            throw new UnsupportedOperationException("a file slice is written by Frames.gathering");
        }
    }

    /** Whether a Fetch response partition carries any batch bytes. */
    static boolean hasRecords(BaseRecords records) {
        return records != null && records.sizeInBytes() > 0;
    }

    /** A Produce request partition's batches as a buffer of their own (a view, no copy), or null if it has none. */
    static ByteBuffer batches(BaseRecords records) {
        return records instanceof MemoryRecords m && m.sizeInBytes() > 0 ? m.buffer().duplicate() : null;
    }

    static ConsumerPartitionAssignor.Subscription subscription(ByteBuffer metadata) {
        return ConsumerProtocol.deserializeSubscription(metadata);
    }

    static ByteBuffer serialize(ConsumerPartitionAssignor.Subscription subscription) {
        return ConsumerProtocol.serializeSubscription(subscription);
    }

    static ByteBuffer serialize(ConsumerPartitionAssignor.Assignment assignment) {
        return ConsumerProtocol.serializeAssignment(assignment);
    }

    /**
     * kafka-clients' server side of one SASL/SCRAM exchange for {@code mechanism}; {@code handler} is given the user
     * name and a credential callback to fill (a delegation-token one for a {@code tokenauth} exchange).
     */
    static SaslServer scramServer(ScramMechanism mechanism, CallbackHandler handler) {
        org.apache.kafka.common.security.scram.internals.ScramMechanism m = internal(mechanism);
        try {
            return new ScramSaslServer(m, Map.of(), handler);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks " + m.hashAlgorithm(), e);
        }
    }

    /** Whether {@code callback} asks for a delegation token's credential rather than a user's. */
    static boolean isDelegationTokenCallback(Callback callback) {
        return callback instanceof DelegationTokenCredentialCallback;
    }

    /** Tells kafka-clients' SCRAM server whom a delegation token ({@link #isDelegationTokenCallback}) is for. */
    static void tokenOwner(Callback callback, String owner, Long expiresAtMs) {
        DelegationTokenCredentialCallback token = (DelegationTokenCredentialCallback) callback;
        token.tokenOwner(owner);
        token.tokenExpiryTimestamp(expiresAtMs);
    }

    /** RFC 5802's credential from a password (a delegation token's), salted here, as Kafka's token manager does. */
    static ScramCredential scramCredential(ScramMechanism mechanism, String password, int iterations) {
        try {
            return new ScramFormatter(internal(mechanism)).generateCredential(password, iterations);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks " + internal(mechanism).hashAlgorithm(), e);
        }
    }

    /** RFC 5802's credential (StoredKey, ServerKey) from a salted password, as Kafka derives it. */
    static ScramCredential scramCredential(ScramMechanism mechanism, byte[] salt, byte[] saltedPassword,
                                           int iterations) {
        try {
            return new ScramFormatter(internal(mechanism)).generateCredential(salt, saltedPassword, iterations);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks " + internal(mechanism).hashAlgorithm(), e);
        }
    }

    /** The fewest and most iterations Kafka accepts for {@code mechanism}: 4096 and 16384. */
    static int minIterations(ScramMechanism mechanism) {
        return internal(mechanism).minIterations();
    }

    static int maxIterations(ScramMechanism mechanism) {
        return internal(mechanism).maxIterations();
    }

    private static org.apache.kafka.common.security.scram.internals.ScramMechanism internal(ScramMechanism m) {
        return org.apache.kafka.common.security.scram.internals.ScramMechanism.forMechanismName(m.mechanismName());
    }

    /**
     * A pushed metrics payload inflated by its codec ({@code codec} 0: as it is), or null when it inflates to more
     * than {@code maxBytes}.
     *
     * @throws IllegalArgumentException a codec id Kafka does not have
     * @throws IOException              a payload the codec cannot read
     */
    static byte[] decompressTelemetry(byte codec, ByteBuffer payload, int maxBytes) throws IOException {
        CompressionType type = CompressionType.forId(codec);
        if (type == CompressionType.NONE) {
            byte[] plain = new byte[payload.remaining()];
            payload.duplicate().get(plain);
            return plain.length > maxBytes ? null : plain;
        }
        // Magic 2, the current record format: the codecs' framing (lz4's in particular) depends on it.
        try (InputStream in = Compression.of(type).build().wrapForInput(payload.duplicate(), (byte) 2,
                BufferSupplier.NO_CACHING)) {
            byte[] out = in.readNBytes(maxBytes + 1);
            return out.length > maxBytes ? null : out;
        } catch (RuntimeException unreadable) {
            // The codecs report a corrupt stream as KafkaException.
            throw new IOException("the payload does not inflate with " + type.name, unreadable);
        }
    }
}
