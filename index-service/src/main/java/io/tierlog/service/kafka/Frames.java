package io.tierlog.service.kafka;

import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.FileRegion;
import io.tierlog.log.BatchSlice;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ReadMemory;
import io.vertx.core.buffer.Buffer;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageSizeAccumulator;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.ResponseHeader;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A response as a Kafka frame, encoded by the message classes' own size/write methods.
 *
 * <p>A response with zero-copy fields (a Fetch response's records: the stored batches, already in pooled direct
 * memory) is written the way Kafka's own {@code SendBuilder} writes it: the message class writes every other field
 * into one small direct buffer, and each records field is gathered into the frame as the buffer it is in, not
 * copied (ADR 0024). Hot batches that are a range of their segment file (ADR 0037) take their place as a
 * {@link DefaultFileRegion}, so the frame is then a list of buffers and regions ({@link Frame#messages}) that the
 * socket sends with {@code sendfile}. The frame holds the batches' memory and files until the socket has written
 * it, so whoever writes it calls {@link Frame#release} once the write completes or fails. Stateless; thread-safe.
 */
final class Frames {
    private Frames() {
    }

    /**
     * A frame ready to write: the 4-byte size, the header and the body, as one buffer that may be a composite of the
     * encoded fields and the batches it carries. {@link #release} gives back the memory of both, once, after the
     * write; the bytes must not be used after it.
     */
    record Frame(Buffer bytes, List<Object> netty, int size, Runnable release) {
        Frame(Buffer bytes, int size, Runnable release) {
            this(bytes, null, size, release);
        }

        /**
         * The frame as Netty messages to write in order: its buffer, or (a frame with file slices) buffers and
         * {@link FileRegion}s. A region closes its file channel when Netty releases it after the write, and
         * {@link #release} closes it too (harmless twice), so a frame dropped unwritten leaks no file either.
         */
        List<Object> messages() {
            return netty != null ? netty : List.of(bytes.getByteBuf());
        }
    }

    /** The 4-byte size, the response header, the body at {@code version}, as one heap buffer (copies everything). */
    static ByteBuffer encode(ResponseHeader header, ApiMessage body, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int headerSize = header.data().size(cache, header.headerVersion());
        int bodySize = body.size(cache, version);
        ByteBuffer frame = ByteBuffer.allocate(4 + headerSize + bodySize);
        frame.putInt(headerSize + bodySize);
        ByteBufferAccessor out = new ByteBufferAccessor(frame);
        header.data().write(out, cache, header.headerVersion());
        body.write(out, cache, version);
        frame.flip();
        return frame;
    }

    /**
     * The response as a frame whose zero-copy fields are not copied: see the class comment. A response without any
     * is encoded on the heap as by {@link #encode}. {@code release} (what the body's fields hold) runs with the
     * frame's own release, or here if encoding fails.
     *
     * @param memory direct memory for the encoded fields, so that the whole frame is direct and the socket write
     *               needs no copy
     */
    static Frame gathering(ResponseHeader header, ApiMessage body, short version, ReadMemory memory, Runnable release) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        MessageSizeAccumulator size = new MessageSizeAccumulator();
        try {
            header.data().addSize(size, cache, header.headerVersion());
            body.addSize(size, cache, version);
            int frameSize = 4 + size.totalSize();
            if (size.totalSize() == size.sizeExcludingZeroCopy()) {
                ByteBuffer heap = encode(header, body, version);
                return new Frame(Buffer.buffer(Unpooled.wrappedBuffer(heap)), frameSize, release);
            }
            ReadBuffer fields = memory.allocate(4 + size.sizeExcludingZeroCopy());
            try {
                GatheringWriter out = new GatheringWriter(fields.memory());
                out.writeInt(size.totalSize());
                header.data().write(out, cache, header.headerVersion());
                body.write(out, cache, version);
                List<Object> parts = out.parts();
                long written = 0;
                for (Object part : parts) {
                    written += part instanceof BatchSlice slice ? slice.sentLength() : ((ByteBuffer) part).remaining();
                }
                if (written != frameSize) {
                    throw new IllegalStateException("encoded " + written + " bytes of a " + frameSize + "-byte frame");
                }
                Runnable releaseAll = () -> {
                    fields.close();
                    release.run();
                };
                if (!out.slices) {
                    Buffer bytes = Buffer.buffer(Unpooled.wrappedBuffer(parts.size(), parts.toArray(ByteBuffer[]::new)));
                    return new Frame(bytes, frameSize, releaseAll);
                }
                return new Frame(null, messages(parts), frameSize, releaseAll);
            } catch (RuntimeException e) {
                fields.close();
                throw e;
            }
        } catch (RuntimeException e) {
            release.run();
            throw e;
        }
    }

    /** Runs of buffers as one composite buffer each, and each file slice as a region of its open channel. */
    private static List<Object> messages(List<Object> parts) {
        List<Object> messages = new ArrayList<>();
        List<ByteBuffer> run = new ArrayList<>();
        for (Object part : parts) {
            if (part instanceof BatchSlice slice) {
                if (!run.isEmpty()) {
                    messages.add(Unpooled.wrappedBuffer(run.size(), run.toArray(ByteBuffer[]::new)));
                    run.clear();
                }
                messages.add(new DefaultFileRegion(slice.channel(), slice.position(), slice.sentLength()));
            } else {
                run.add((ByteBuffer) part);
            }
        }
        if (!run.isEmpty()) {
            messages.add(Unpooled.wrappedBuffer(run.size(), run.toArray(ByteBuffer[]::new)));
        }
        return messages;
    }

    /**
     * Writes fields into one buffer and takes every byte-buffer field (the message classes write a records field
     * and any other zero-copy bytes field through {@link #writeByteBuffer}) as a part of its own, between the
     * slices of fields around it; a records field that is a file slice
     * ({@link KafkaInternals#records(BatchSlice)}) becomes a part of its own the same way, as the
     * {@link BatchSlice}. Not thread-safe.
     */
    private static final class GatheringWriter extends KafkaInternals.SliceWriter {
        private final ByteBuffer fields;
        private final List<Object> parts = new ArrayList<>();
        /** Whether any part is a file slice. */
        boolean slices;
        /** Where the fields not yet taken as a part begin. */
        private int mark;

        GatheringWriter(ByteBuffer fields) {
            super(fields);
            this.fields = fields;
        }

        @Override
        public void writeByteBuffer(ByteBuffer src) {
            if (!src.hasRemaining()) {
                return;
            }
            takeFields();
            parts.add(src.duplicate());
        }

        @Override
        protected void writeSlice(BatchSlice slice) {
            if (slice.length() > 0) {
                takeFields();
                parts.add(slice);
                slices = true;
            }
        }

        private void takeFields() {
            if (fields.position() > mark) {
                parts.add(fields.slice(mark, fields.position() - mark));
                mark = fields.position();
            }
        }

        /** The frame's parts in order; the writer must not be used after. */
        List<Object> parts() {
            takeFields();
            return parts;
        }
    }
}
