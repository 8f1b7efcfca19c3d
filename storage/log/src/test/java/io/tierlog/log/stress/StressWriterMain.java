package io.tierlog.log.stress;

import io.tierlog.log.HotLog;
import io.tierlog.log.AppendResult;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One writer process of {@link MultiProcessStressTest}. Prints {@code ready}, waits for a line on stdin (so all
 * writers start appending together), then appends {@code batches} batches to one partition. Batch {@code n} of
 * writer {@code w} has payload id {@code w<w>-b<n>} and 1..4 records valued {@code <payload id>-r<k>} plus
 * padding. After each append returns, a line {@code <baseOffset> <lastOffset> <payload id>} goes to the ack file.
 *
 * <p>Arguments: data-dir topic partition writer-id batches ack-file segment-bytes fsync
 */
public final class StressWriterMain {
    static final String PADDING = "x".repeat(64);

    private StressWriterMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dataDir = Path.of(args[0]);
        TopicPartition tp = new TopicPartition(args[1], Integer.parseInt(args[2]));
        int writerId = Integer.parseInt(args[3]);
        int batches = Integer.parseInt(args[4]);
        Path ackFile = Path.of(args[5]);
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, Long.parseLong(args[6])));
        FsyncPolicy fsync = FsyncPolicy.parse(args[7]);

        try (PartitionWriter writer = new HotLog(dataDir).writer(tp, fsync, Duration.ofSeconds(1), Clock.systemUTC());
             BufferedWriter acks = Files.newBufferedWriter(ackFile, StandardCharsets.UTF_8)) {
            System.out.println("ready");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            for (int n = 0; n < batches; n++) {
                String payloadId = payloadId(writerId, n);
                AppendResult r = writer.append(batch(payloadId, 1 + (n % 4)), ProducerIdentity.NONE, config);
                acks.write(r.baseOffset() + " " + r.lastOffset() + " " + payloadId);
                acks.newLine();
            }
        }
        System.out.println("done");
    }

    static String payloadId(int writer, int batch) {
        return "w" + writer + "-b" + batch;
    }

    static List<AppendRecord> batch(String payloadId, int records) {
        List<AppendRecord> out = new ArrayList<>(records);
        for (int k = 0; k < records; k++) {
            byte[] value = (payloadId + "-r" + k + "|" + PADDING).getBytes(StandardCharsets.UTF_8);
            out.add(new AppendRecord(payloadId.getBytes(StandardCharsets.UTF_8), value,
                    List.of(new Header("payload", payloadId.getBytes(StandardCharsets.UTF_8))), System.currentTimeMillis()));
        }
        return out;
    }
}
