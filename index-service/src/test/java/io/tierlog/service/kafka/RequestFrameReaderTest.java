package io.tierlog.service.kafka;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's request framing as the listener reads it: requests whole and in order however TCP cuts the stream, a size
 * out of bounds refused before any memory is taken for it, every request block and every socket buffer given back
 * exactly once.
 */
class RequestFrameReaderTest {
    private static final int MIN = 10;
    private static final int MAX = 1000;

    /** Direct blocks that count how often each is given back. */
    private static final class CountingMemory implements ReadMemory {
        final List<AtomicInteger> releases = new ArrayList<>();
        final List<Integer> sizes = new ArrayList<>();

        @Override
        public ReadBuffer allocate(int capacity) {
            AtomicInteger released = new AtomicInteger();
            releases.add(released);
            sizes.add(capacity);
            return new ReadBuffer(ByteBuffer.allocateDirect(capacity), released::incrementAndGet);
        }

        void assertAllReleasedOnce() {
            assertThat(releases).allSatisfy(r -> assertThat(r.get()).isEqualTo(1));
        }
    }

    /** Collects requests as bytes and gives their blocks back at once, as an answered request does. */
    private static final class Collecting implements RequestFrameReader.Sink {
        final List<byte[]> requests = new ArrayList<>();
        final List<Integer> refused = new ArrayList<>();
        RequestFrameReader reader;
        int pauseAfter = Integer.MAX_VALUE;

        @Override
        public void request(ReadBuffer request) {
            ByteBuffer b = request.memory();
            assertThat(b.position()).isZero();
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            requests.add(bytes);
            request.close();
            if (requests.size() == pauseAfter) {
                reader.pause();
            }
        }

        @Override
        public void refused(int size) {
            refused.add(size);
        }

        final List<Integer> noMemory = new ArrayList<>();

        @Override
        public void noMemory(int size) {
            noMemory.add(size);
        }
    }

    private static byte[] request(Random random, int size) {
        byte[] r = new byte[size];
        random.nextBytes(r);
        return r;
    }

    private static byte[] framed(List<byte[]> requests) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] r : requests) {
            out.writeBytes(ByteBuffer.allocate(4).putInt(r.length).array());
            out.writeBytes(r);
        }
        return out.toByteArray();
    }

    private static ByteBuf direct(byte[] bytes, int from, int to) {
        ByteBuf b = Unpooled.directBuffer(to - from);
        b.writeBytes(bytes, from, to - from);
        return b;
    }

    @Test
    void requestsSplitAcrossReadsAtEveryPointArriveWhole() {
        Random random = new Random(7);
        List<byte[]> sent = List.of(request(random, MIN), request(random, 300), request(random, MAX), request(random, 17));
        byte[] stream = framed(sent);
        // Every cut point once (each size byte, each body byte), then random cuts, then one byte per read.
        for (int cut = 1; cut < stream.length; cut++) {
            assertReadAs(stream, sent, List.of(cut));
        }
        for (int trial = 0; trial < 200; trial++) {
            List<Integer> cuts = new ArrayList<>();
            for (int at = random.nextInt(50) + 1; at < stream.length; at += random.nextInt(300) + 1) {
                cuts.add(at);
            }
            assertReadAs(stream, sent, cuts);
        }
        List<Integer> everyByte = new ArrayList<>();
        for (int at = 1; at < stream.length; at++) {
            everyByte.add(at);
        }
        assertReadAs(stream, sent, everyByte);
    }

    private static void assertReadAs(byte[] stream, List<byte[]> sent, List<Integer> cuts) {
        CountingMemory memory = new CountingMemory();
        Collecting sink = new Collecting();
        RequestFrameReader reader = new RequestFrameReader(memory, MIN, MAX, sink);
        List<ByteBuf> reads = new ArrayList<>();
        int from = 0;
        for (int cut : cuts) {
            reads.add(direct(stream, from, cut));
            from = cut;
        }
        reads.add(direct(stream, from, stream.length));
        reads.forEach(reader::offer);
        assertThat(sink.requests).containsExactlyElementsOf(sent);
        assertThat(memory.sizes).containsExactlyElementsOf(sent.stream().map(r -> r.length).toList());
        memory.assertAllReleasedOnce();
        assertThat(reads).allSatisfy(b -> assertThat(b.refCnt()).isZero());
        assertThat(sink.refused).isEmpty();
    }

    @Test
    void manyRequestsInOneReadAreAllHandedOnInOrder() {
        Random random = new Random(11);
        List<byte[]> sent = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            sent.add(request(random, MIN + random.nextInt(100)));
        }
        assertReadAs(framed(sent), sent, List.of());
    }

    @Test
    void aSizeAboveTheLimitIsRefusedBeforeAnyMemoryIsTaken() {
        CountingMemory memory = new CountingMemory();
        Collecting sink = new Collecting();
        RequestFrameReader reader = new RequestFrameReader(memory, MIN, MAX, sink);
        byte[] ok = request(new Random(1), 20);
        byte[] stream = framed(List.of(ok));
        ByteBuf first = direct(stream, 0, stream.length);
        // Only the size of the oversize frame arrives: the refusal needs nothing more.
        ByteBuf size = Unpooled.directBuffer(4).writeInt(MAX + 1);
        ByteBuf after = direct(new byte[64], 0, 64);
        reader.offer(first);
        reader.offer(size);
        reader.offer(after);
        assertThat(sink.requests).containsExactly(ok);
        assertThat(sink.refused).containsExactly(MAX + 1);
        assertThat(memory.sizes).containsExactly(20);
        memory.assertAllReleasedOnce();
        assertThat(List.of(first, size, after)).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    @Test
    void sizesBelowTheSmallestHeaderAndNegativeSizesAreRefused() {
        for (int bad : new int[]{MIN - 1, 0, -1, Integer.MIN_VALUE}) {
            CountingMemory memory = new CountingMemory();
            Collecting sink = new Collecting();
            RequestFrameReader reader = new RequestFrameReader(memory, MIN, MAX, sink);
            ByteBuf in = Unpooled.directBuffer(64).writeInt(bad).writeZero(60);
            reader.offer(in);
            assertThat(sink.refused).containsExactly(bad);
            assertThat(sink.requests).isEmpty();
            assertThat(memory.sizes).isEmpty();
            assertThat(in.refCnt()).isZero();
        }
    }

    @Test
    void aRequestExactlyAtTheLimitIsRead() {
        Random random = new Random(3);
        List<byte[]> sent = List.of(request(random, MAX), request(random, MIN));
        assertReadAs(framed(sent), sent, List.of(2, 500, 1003));
    }

    @Test
    void whilePausedRequestsWaitAndResumeHandsThemOnInOrder() {
        Random random = new Random(5);
        List<byte[]> sent = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            sent.add(request(random, 40 + i));
        }
        byte[] stream = framed(sent);
        CountingMemory memory = new CountingMemory();
        Collecting sink = new Collecting();
        RequestFrameReader reader = new RequestFrameReader(memory, MIN, MAX, sink);
        sink.reader = reader;
        sink.pauseAfter = 2;
        ByteBuf one = direct(stream, 0, 100);
        ByteBuf two = direct(stream, 100, stream.length);
        reader.offer(one);
        reader.offer(two);
        assertThat(sink.requests).hasSize(2);
        assertThat(reader.paused()).isTrue();
        assertThat(two.refCnt()).isEqualTo(1); // kept, not copied, while paused
        sink.pauseAfter = 4;
        reader.resume();
        assertThat(sink.requests).hasSize(4);
        reader.resume();
        assertThat(sink.requests).containsExactlyElementsOf(sent);
        memory.assertAllReleasedOnce();
        assertThat(List.of(one, two)).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    @Test
    void closeGivesBackAPartRequestAndKeptBytesOnceAndDropsLaterOnes() {
        CountingMemory memory = new CountingMemory();
        Collecting sink = new Collecting();
        RequestFrameReader reader = new RequestFrameReader(memory, MIN, MAX, sink);
        sink.reader = reader;
        sink.pauseAfter = 1;
        byte[] stream = framed(List.of(request(new Random(9), 50), request(new Random(10), 60)));
        ByteBuf whole = direct(stream, 0, stream.length);
        reader.offer(whole); // the first request, then paused with the second kept
        ByteBuf part = Unpooled.directBuffer(16).writeInt(500).writeZero(12);
        reader.offer(part);
        reader.close();
        reader.close();
        ByteBuf late = Unpooled.directBuffer(8).writeZero(8);
        reader.offer(late);
        assertThat(sink.requests).hasSize(1);
        memory.assertAllReleasedOnce();
        assertThat(List.of(whole, part, late)).allSatisfy(b -> assertThat(b.refCnt()).isZero());

        // A request whose block is half filled when the connection closes.
        CountingMemory memory2 = new CountingMemory();
        RequestFrameReader reader2 = new RequestFrameReader(memory2, MIN, MAX, new Collecting());
        reader2.offer(Unpooled.directBuffer(16).writeInt(500).writeZero(12));
        assertThat(memory2.sizes).containsExactly(500);
        assertThat(memory2.releases.get(0).get()).isZero();
        reader2.close();
        reader2.close();
        memory2.assertAllReleasedOnce();
    }

    @Test
    void aHandedOnRequestIsTheSinksAndOutlivesTheReader() {
        CountingMemory memory = new CountingMemory();
        List<ReadBuffer> held = new ArrayList<>();
        RequestFrameReader reader = new RequestFrameReader(memory, MIN, MAX, new RequestFrameReader.Sink() {
            @Override
            public void request(ReadBuffer request) {
                held.add(request); // as a produce still being appended
            }

            @Override
            public void refused(int size) {
            }

            @Override
            public void noMemory(int size) {
            }
        });
        byte[] r = request(new Random(2), 30);
        byte[] stream = framed(List.of(r, r));
        reader.offer(direct(stream, 0, stream.length));
        reader.close();
        assertThat(held).hasSize(2);
        assertThat(memory.releases).allSatisfy(n -> assertThat(n.get()).isZero());
        byte[] still = new byte[30];
        held.get(1).memory().get(0, still);
        assertThat(still).isEqualTo(r);
        held.forEach(ReadBuffer::close);
        memory.assertAllReleasedOnce();
    }

    @Test
    void aRequestTheJvmHasNoDirectMemoryForWaitsPausedAndArrivesWholeOnceMemoryIsBack() {
        Random random = new Random(11);
        List<byte[]> sent = List.of(request(random, 300), request(random, 40));
        byte[] stream = framed(sent);
        CountingMemory pool = new CountingMemory();
        AtomicInteger refusals = new AtomicInteger(2);
        Collecting sink = new Collecting();
        RequestFrameReader reader = new RequestFrameReader(capacity -> {
            if (refusals.getAndDecrement() > 0) {
                throw new OutOfMemoryError("Cannot reserve " + capacity + " bytes of direct buffer memory");
            }
            return pool.allocate(capacity);
        }, MIN, MAX, sink);
        sink.reader = reader;
        ByteBuf first = direct(stream, 0, 100);
        ByteBuf rest = direct(stream, 100, stream.length);
        reader.offer(first);
        reader.offer(rest);

        assertThat(sink.noMemory).containsExactly(300);
        assertThat(reader.paused()).isTrue();
        assertThat(sink.refused).isEmpty();
        assertThat(sink.requests).isEmpty();
        assertThat(first.refCnt()).as("the bytes after the size are kept while it waits").isOne();

        reader.resume(); // still none
        assertThat(sink.noMemory).containsExactly(300, 300);
        assertThat(sink.requests).isEmpty();

        reader.resume(); // memory is back
        assertThat(sink.requests).containsExactlyElementsOf(sent);
        assertThat(reader.paused()).isFalse();
        assertThat(List.of(first, rest)).allSatisfy(b -> assertThat(b.refCnt()).isZero());
        pool.assertAllReleasedOnce();
    }

    @Test
    void closingWhileWaitingForMemoryGivesBackTheKeptBytes() {
        Collecting sink = new Collecting();
        RequestFrameReader reader = new RequestFrameReader(capacity -> {
            throw new OutOfMemoryError("Cannot reserve " + capacity + " bytes of direct buffer memory");
        }, MIN, MAX, sink);
        ByteBuf in = Unpooled.directBuffer(64).writeInt(MAX).writeZero(60);
        reader.offer(in);
        assertThat(sink.noMemory).containsExactly(MAX);
        reader.close();
        ByteBuf later = Unpooled.directBuffer(8).writeZero(8);
        reader.offer(later);
        assertThat(List.of(in, later)).allSatisfy(b -> assertThat(b.refCnt()).isZero());
        assertThat(sink.requests).isEmpty();
    }
}
