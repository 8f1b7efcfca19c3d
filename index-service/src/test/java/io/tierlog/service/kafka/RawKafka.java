package io.tierlog.service.kafka;

import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * One plain socket to the listener, speaking Kafka's framing with kafka-clients' request and response classes: for
 * tests that need a request a client library would not send (a retried batch, a sequence gap) or need to see the
 * exact answer.
 */
final class RawKafka implements AutoCloseable {
    private final Socket socket;
    private int correlationId;

    RawKafka(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(20_000);
    }

    /** A connection from {@code local}, a loopback address other than 127.0.0.1 (a second client host). */
    RawKafka(java.net.InetAddress local, int port) throws IOException {
        socket = new Socket(java.net.InetAddress.getLoopbackAddress(), port, local, 0);
        socket.setSoTimeout(20_000);
    }

    /** A connection authenticated with SASL/PLAIN, {@code token} the password. */
    static RawKafka authenticated(int port, String token) throws IOException {
        return authenticated(new RawKafka(port), token);
    }

    /** {@code raw} once authenticated with SASL/PLAIN, {@code token} the password. */
    static RawKafka authenticated(RawKafka raw, String token) throws IOException {
        SaslHandshakeResponse handshake = raw.call(new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData()
                .setMechanism("PLAIN")), (short) 1);
        SaslAuthenticateResponse auth = raw.call(new SaslAuthenticateRequest.Builder(
                new SaslAuthenticateRequestData().setAuthBytes(("\u0000anyone\u0000" + token)
                        .getBytes(StandardCharsets.UTF_8))), ApiKeys.SASL_AUTHENTICATE);
        if (handshake.data().errorCode() != Errors.NONE.code() || auth.data().errorCode() != Errors.NONE.code()) {
            raw.close();
            throw new IllegalStateException("SASL/PLAIN refused: " + handshake.data() + " " + auth.data());
        }
        return raw;
    }

    /** A connection whose receive buffer is {@code receiveBuffer} bytes: a large answer stays pending until read. */
    RawKafka(int port, int receiveBuffer) throws IOException {
        socket = new Socket();
        socket.setReceiveBufferSize(receiveBuffer);
        socket.connect(new java.net.InetSocketAddress("127.0.0.1", port));
        socket.setSoTimeout(20_000);
    }

    /** The raw input: for reading an answer piece by piece. */
    java.io.InputStream input() throws IOException {
        return socket.getInputStream();
    }

    /** Sends {@code request} at its version and reads its answer (the next frame on the connection). */
    @SuppressWarnings("unchecked")
    <R extends AbstractResponse> R call(AbstractRequest request) throws IOException {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), "raw", ++correlationId);
        send(header, request);
        return (R) AbstractResponse.parseResponse(receive(), header);
    }

    <R extends AbstractResponse> R call(AbstractRequest.Builder<?> builder, short version) throws IOException {
        return call(builder.build(version));
    }

    <R extends AbstractResponse> R call(AbstractRequest.Builder<?> builder, ApiKeys api) throws IOException {
        return call(builder.build(api.latestVersion()));
    }

    void send(RequestHeader header, AbstractRequest request) throws IOException {
        ByteBuffer body = request.serializeWithHeader(header);
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.writeInt(body.remaining());
        out.write(body.array(), body.arrayOffset() + body.position(), body.remaining());
        out.flush();
    }

    ByteBuffer receive() throws IOException {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] frame = new byte[in.readInt()];
        in.readFully(frame);
        return ByteBuffer.wrap(frame);
    }

    /** True once the listener has closed this connection (a read sees its end). */
    boolean closedByPeer() throws IOException {
        try {
            return socket.getInputStream().read() == -1;
        } catch (java.net.SocketException reset) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
