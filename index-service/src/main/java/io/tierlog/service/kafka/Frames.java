package io.tierlog.service.kafka;

import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.ResponseHeader;

import java.nio.ByteBuffer;

/** A response as a Kafka frame, encoded by the message classes' own size/write methods. */
final class Frames {
    private Frames() {
    }

    /** The 4-byte size, the response header, the body at {@code version}; ready to write. */
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
}
