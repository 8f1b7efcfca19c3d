package io.tierlog.service.kafka;

import io.netty.buffer.ByteBuf;
import io.netty.channel.FileRegion;
import io.tierlog.log.BatchSlice;
import io.tierlog.log.HotLog;
import io.tierlog.log.Position;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.service.PooledDirectMemory;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The listener's response frames: a Fetch response written with its batches gathered, not copied, is byte for byte
 * the frame the message classes encode on the heap, at every Fetch version; its frame is direct memory (the socket
 * write copies nothing) over the batches' own memory; and its memory is given back once, when released.
 */
class FramesTest {
    private static final Uuid TOPIC_ID = Uuid.randomUuid();

    /** Batches of {@code n} records "p-i" as kafka-clients writes them, moved to direct memory as a fetch reads them. */
    private static MemoryRecords directBatches(int partition, int n, Compression compression) {
        ByteBuffer all = ByteBuffer.allocate(1 << 16);
        for (int first = 0; first < n; first += 3) {
            List<SimpleRecord> records = new ArrayList<>();
            for (int i = first; i < Math.min(n, first + 3); i++) {
                records.add(new SimpleRecord(1_700_000_000_000L + i, ("k" + i).getBytes(StandardCharsets.UTF_8),
                        (partition + "-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            MemoryRecords batch = MemoryRecords.withRecords(RecordBatch.CURRENT_MAGIC_VALUE, first, compression,
                    org.apache.kafka.common.record.TimestampType.CREATE_TIME, records.toArray(SimpleRecord[]::new));
            all.put(batch.buffer());
        }
        all.flip();
        ByteBuffer direct = ByteBuffer.allocateDirect(all.remaining());
        direct.put(all).flip();
        return MemoryRecords.readableRecords(direct.asReadOnlyBuffer());
    }

    /** A topic by name before Fetch v13, by id from v13, as a request at {@code version} names it. */
    private static FetchResponseData response(List<MemoryRecords> perPartition, short version) {
        FetchResponseData.FetchableTopicResponse topic = version < 13
                ? new FetchResponseData.FetchableTopicResponse().setTopic("frames")
                : new FetchResponseData.FetchableTopicResponse().setTopicId(TOPIC_ID);
        for (int p = 0; p < perPartition.size(); p++) {
            topic.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(p).setHighWatermark(100 + p)
                    .setLastStableOffset(100 + p).setLogStartOffset(0).setPreferredReadReplica(-1)
                    .setRecords(perPartition.get(p)));
        }
        // A partition that answers an error and no records sits between two with batches.
        topic.partitions().add(1, new FetchResponseData.PartitionData().setPartitionIndex(9)
                .setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code()).setHighWatermark(5).setLogStartOffset(0)
                .setRecords(MemoryRecords.EMPTY));
        return new FetchResponseData().setSessionId(version >= 7 ? 42 : 0).setResponses(new ArrayList<>(List.of(topic)));
    }

    private static byte[] bytes(ByteBuf buf) {
        byte[] out = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), out);
        return out;
    }

    @Test
    void aGatheredFetchFrameIsTheHeapFrameAtEveryVersion() {
        PooledDirectMemory memory = new PooledDirectMemory();
        List<MemoryRecords> batches = List.of(directBatches(0, 7, Compression.NONE),
                directBatches(1, 5, Compression.lz4().build()), directBatches(2, 4, Compression.zstd().build()));
        for (short v = ApiKeys.FETCH.oldestVersion(); v <= ApiKeys.FETCH.latestVersion(); v++) {
            FetchResponseData body = response(batches, v);
            ResponseHeader header = new ResponseHeader(1000 + v, ApiKeys.FETCH.responseHeaderVersion(v));
            AtomicInteger released = new AtomicInteger();
            Frames.Frame frame = Frames.gathering(header, body, v, memory, released::incrementAndGet);
            ByteBuf buf = frame.bytes().getByteBuf();
            ByteBuffer heap = Frames.encode(header, body, v);

            assertThat(bytes(buf)).as("v%d", v).isEqualTo(heap.array());
            assertThat(frame.size()).isEqualTo(heap.remaining());
            assertThat(buf.isDirect()).as("v%d: a direct frame, so the socket write copies nothing", v).isTrue();
            assertThat(buf.nioBufferCount()).as("v%d: fields and batches as separate parts", v).isGreaterThan(3);

            // Read back by kafka-clients as a consumer would: every record of every partition, in order.
            ByteBuffer parsed = ByteBuffer.wrap(bytes(buf), 4, frame.size() - 4);
            ResponseHeader.parse(parsed, header.headerVersion());
            FetchResponse back = FetchResponse.parse(new org.apache.kafka.common.protocol.ByteBufferAccessor(parsed), v);
            List<String> values = new ArrayList<>();
            back.data().responses().get(0).partitions().forEach(p -> {
                for (RecordBatch b : ((MemoryRecords) p.records()).batches()) {
                    for (Record r : b) {
                        values.add(StandardCharsets.UTF_8.decode(r.value()).toString());
                    }
                }
            });
            assertThat(values).as("v%d", v).containsExactly("0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6",
                    "1-0", "1-1", "1-2", "1-3", "1-4", "2-0", "2-1", "2-2", "2-3");

            assertThat(released).hasValue(0);
            assertThat(memory.heldBytes()).isPositive();
            frame.release().run();
            assertThat(released).hasValue(1);
            assertThat(memory.heldBytes()).isZero();
        }
    }

    @Test
    void theBatchesAreSentFromTheirOwnMemoryNotACopy() {
        MemoryRecords records = directBatches(0, 3, Compression.NONE);
        // A writable view of the same direct memory, standing in for the read buffer a fetch filled.
        ByteBuffer source = records.buffer();
        ByteBuffer writable = ByteBuffer.allocateDirect(source.remaining());
        writable.put(source.duplicate()).flip();
        short v = ApiKeys.FETCH.latestVersion();
        FetchResponseData body = response(List.of(MemoryRecords.readableRecords(writable.duplicate())), v);
        Frames.Frame frame = Frames.gathering(new ResponseHeader(7, ApiKeys.FETCH.responseHeaderVersion(v)), body, v,
                new PooledDirectMemory(), () -> { });
        byte[] before = bytes(frame.bytes().getByteBuf());
        int at = indexOf(before, "0-2".getBytes(StandardCharsets.UTF_8));
        assertThat(at).isPositive();

        // A byte changed in the batches' memory after encoding shows in the frame: it holds that memory itself.
        int inBatches = indexOf(bytesOf(writable), "0-2".getBytes(StandardCharsets.UTF_8));
        writable.put(inBatches, (byte) 'X');
        assertThat(frame.bytes().getByteBuf().getByte(at)).isEqualTo((byte) 'X');
        frame.release().run();
    }

    /** {@code records}' bytes as partition {@code p}'s only hot segment under {@code dataDir}, sliced as a fetch would. */
    private static BatchSlice slice(Path dataDir, int p, MemoryRecords records) throws IOException {
        io.tierlog.log.TopicPartition tp = new io.tierlog.log.TopicPartition("frames", p);
        Path dir = Files.createDirectories(dataDir.resolve(tp.dirName()));
        byte[] bytes = bytesOf(records.buffer());
        Files.write(SegmentFiles.log(dir, 0), bytes);
        long next = 0;
        for (RecordBatch b : records.batches()) {
            next = b.nextOffset();
        }
        return new HotLog(dataDir).reader(tp).sliceBatches(0, null, Integer.MAX_VALUE, Integer.MAX_VALUE,
                new Position(next, 0, bytes.length));
    }

    /** Everything a frame's messages put on the wire, as a socket would send it (file regions by transferTo). */
    private static byte[] wire(Frames.Frame frame) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.nio.channels.WritableByteChannel channel = java.nio.channels.Channels.newChannel(out);
        for (Object m : frame.messages()) {
            if (m instanceof FileRegion region) {
                while (region.transferred() < region.count()) {
                    region.transferTo(channel, region.transferred());
                }
            } else {
                out.write(bytes((ByteBuf) m));
            }
        }
        return out.toByteArray();
    }

    @Test
    void aFetchFrameWithFileSlicesIsTheHeapFrameAtEveryVersion(@TempDir Path data) throws IOException {
        PooledDirectMemory memory = new PooledDirectMemory();
        List<MemoryRecords> batches = List.of(directBatches(0, 7, Compression.NONE),
                directBatches(1, 5, Compression.lz4().build()), directBatches(2, 4, Compression.zstd().build()));
        for (short v = ApiKeys.FETCH.oldestVersion(); v <= ApiKeys.FETCH.latestVersion(); v++) {
            // Partitions 0 and 2 hot (their segment files, not read), partition 1 cold (in memory), as a fetch mixes them.
            List<BatchSlice> slices = List.of(slice(data.resolve("v" + v), 0, batches.get(0)),
                    slice(data.resolve("v" + v), 2, batches.get(2)));
            FetchResponseData body = response(List.of(batches.get(0), batches.get(1), batches.get(2)), v);
            body.responses().get(0).partitions().get(0).setRecords(KafkaInternals.records(slices.get(0)));
            body.responses().get(0).partitions().get(3).setRecords(KafkaInternals.records(slices.get(1)));
            ResponseHeader header = new ResponseHeader(2000 + v, ApiKeys.FETCH.responseHeaderVersion(v));
            AtomicInteger released = new AtomicInteger();
            Frames.Frame frame = Frames.gathering(header, body, v, memory, () -> {
                released.incrementAndGet();
                slices.forEach(BatchSlice::close);
            });
            ByteBuffer heap = Frames.encode(header, response(batches, v), v);

            assertThat(frame.messages()).as("v%d", v).filteredOn(m -> m instanceof FileRegion).hasSize(2);
            assertThat(wire(frame)).as("v%d", v).isEqualTo(heap.array());
            assertThat(frame.size()).isEqualTo(heap.remaining());

            // Netty releases each message after writing it; a region then closes its file, and the frame's own
            // release (which closes the slices) may follow without harm.
            frame.messages().forEach(io.netty.util.ReferenceCountUtil::release);
            assertThat(slices).allMatch(s -> !s.channel().isOpen());
            frame.release().run();
            assertThat(released).hasValue(1);
            assertThat(memory.heldBytes()).isZero();
        }
    }

    @Test
    void aResponseWithoutBatchesIsOneHeapFrame() {
        FetchResponseData body = new FetchResponseData().setErrorCode(Errors.FETCH_SESSION_ID_NOT_FOUND.code());
        short v = ApiKeys.FETCH.latestVersion();
        ResponseHeader header = new ResponseHeader(3, ApiKeys.FETCH.responseHeaderVersion(v));
        PooledDirectMemory memory = new PooledDirectMemory();
        AtomicInteger released = new AtomicInteger();
        Frames.Frame frame = Frames.gathering(header, body, v, memory, released::incrementAndGet);
        assertThat(bytes(frame.bytes().getByteBuf())).isEqualTo(Frames.encode(header, body, v).array());
        assertThat(memory.heldBytes()).isZero();
        frame.release().run();
        assertThat(released).hasValue(1);
    }

    private static byte[] bytesOf(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
