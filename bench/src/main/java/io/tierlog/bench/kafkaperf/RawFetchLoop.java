package io.tierlog.bench.kafkaperf;

import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.RequestHeader;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Fetch round trips over one plain socket, with no consumer behind them: each asks every partition for 1 MiB
 * ({@code max.partition.fetch.bytes}) from an offset that moves through the topic two batches at a time (the layout
 * {@link FullBatchWriter} writes: two full batches fit 1 MiB), and reads the answer and drops it. What it times is the server's
 * share of a fetch, which ConsumerPerformance's processing between fetches hides (ADR 0044). Fetch v12 names topics
 * by name, so the same loop runs against both servers.
 */
final class RawFetchLoop {
    private static final short VERSION = 12;

    /**
     * One loop's latencies (request written to answer read): median, 90th percentile and mean, in ms; and the median
     * time to the answer's first bytes (its size), which splits the server's work before it sends from the send.
     */
    record Result(int fetches, long bytesPerFetch, double p50Ms, double p90Ms, double meanMs, double firstBytesP50Ms) {
        String line() {
            return String.format("%d fetches of %,d bytes: p50 %.2f ms, p90 %.2f ms, mean %.2f ms, first bytes p50 %.3f ms",
                    fetches, bytesPerFetch, p50Ms, p90Ms, meanMs, firstBytesP50Ms);
        }
    }

    private RawFetchLoop() {
    }

    /**
     * Runs {@code fetches} round trips against {@code bootstrap} ({@code host:port}) on {@code topic} of
     * {@code partitions} partitions holding {@code recordsPerPartition} records each, in batches of
     * {@code recordsPerBatch}.
     */
    static Result run(String bootstrap, String topic, int partitions, long recordsPerPartition, int recordsPerBatch,
                      int fetches) throws IOException {
        int colon = bootstrap.lastIndexOf(':');
        long recordsPerFetch = 2L * recordsPerBatch;
        long positions = Math.max(1, recordsPerPartition / recordsPerFetch);
        long[] nanos = new long[fetches];
        long[] firstBytes = new long[fetches];
        long bytes = 0;
        byte[] sink = new byte[1 << 20];
        try (Socket socket = new Socket(bootstrap.substring(0, colon), Integer.parseInt(bootstrap.substring(colon + 1)))) {
            socket.setTcpNoDelay(true);
            socket.setReceiveBufferSize(64 * 1024); // the Kafka consumer's receive.buffer.bytes
            OutputStream out = socket.getOutputStream();
            DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 * 1024));
            for (int i = 0; i < fetches; i++) {
                ByteBuffer request = request(topic, partitions, (i % positions) * recordsPerFetch, i);
                long start = System.nanoTime();
                new DataOutputStream(out).writeInt(request.remaining());
                out.write(request.array(), request.arrayOffset() + request.position(), request.remaining());
                out.flush();
                int size = in.readInt();
                firstBytes[i] = System.nanoTime() - start;
                for (int left = size; left > 0; ) {
                    int n = in.read(sink, 0, Math.min(sink.length, left));
                    if (n < 0) {
                        throw new EOFException("connection closed with " + left + " bytes of an answer unread");
                    }
                    left -= n;
                }
                nanos[i] = System.nanoTime() - start;
                bytes += size;
            }
        }
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        Arrays.sort(firstBytes);
        return new Result(fetches, bytes / fetches, sorted[fetches / 2] / 1e6, sorted[fetches * 9 / 10] / 1e6,
                Arrays.stream(nanos).average().orElse(0) / 1e6, firstBytes[fetches / 2] / 1e6);
    }

    private static ByteBuffer request(String topic, int partitions, long offset, int correlationId) {
        FetchRequestData data = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(500).setMinBytes(1)
                .setMaxBytes(50 * 1024 * 1024).setSessionId(0).setSessionEpoch(-1);
        FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic().setTopic(topic);
        for (int p = 0; p < partitions; p++) {
            t.partitions().add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(offset)
                    .setPartitionMaxBytes(1024 * 1024).setLogStartOffset(-1).setCurrentLeaderEpoch(-1));
        }
        data.topics().add(t);
        return new FetchRequest(data, VERSION).serializeWithHeader(
                new RequestHeader(ApiKeys.FETCH, VERSION, "tierlog-bench-raw-fetch", correlationId));
    }
}
