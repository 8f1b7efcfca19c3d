package io.tierlog.log.crash;

import io.tierlog.log.HotLog;
import io.tierlog.log.AppendResult;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ClientBatchValidator;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.topic.TopicConfig;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The idempotent producer that {@link CrashRecoveryTest} kills with SIGKILL. It appends batch after batch with
 * {@code fsync=always}, producer id {@value #PRODUCER_ID}, epoch 0 and Kafka's numbering (batch {@code seq} starts at
 * {@link #firstSequence}, the records of the batches before it); the content of
 * batch {@code seq} is a pure function of {@code seq}. Only after {@code append} returns does it write the ack
 * line {@code <seq> <baseOffset> <lastOffset> <duplicate>} (one write(2) call).
 *
 * <p>On start it resumes after the last complete ack line: the sequence after it may have been written to the log
 * before the previous process died (in flight, unacknowledged), so it is retried with the same sequence and
 * content, and the log's producer state must answer it as a duplicate instead of appending it twice.
 *
 * <p>A life appends either through the JSON path's core ({@code own}: records encoded by the writer) or as a client
 * would ({@code client}: the same records as a kafka-clients-built batch, validated by {@link ClientBatchValidator}
 * and appended as sent). The batch bytes differ only in the base offset, so a batch written by one kind of life and
 * retried by the other must be recognised as the same producer batch.
 *
 * <p>Arguments: data-dir topic ack-file segment-bytes stop-after (batches to append in this life; -1 = forever)
 * mode ({@code own} or {@code client}) [halt-before-ack-after (halt between the append and the ack of this life's
 * n-th batch)]
 */
public final class CrashWriterMain {
    static final long PRODUCER_ID = 4242;
    static final long BASE_TIMESTAMP = 1_700_000_000_000L;

    private CrashWriterMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dataDir = Path.of(args[0]);
        TopicPartition tp = new TopicPartition(args[1], 0);
        Path ackFile = Path.of(args[2]);
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, Long.parseLong(args[3])));
        long stopAfter = Long.parseLong(args[4]);
        // Optional: die (as SIGKILL would) after this many appends, between append and ack, so that at least one
        // life ends with its batch in the log but unacknowledged, whatever the random kill times do.
        boolean client = switch (args[5]) {
            case "own" -> false;
            case "client" -> true;
            default -> throw new IllegalArgumentException("mode must be own or client: " + args[5]);
        };
        long haltBeforeAckAfter = args.length > 6 ? Long.parseLong(args[6]) : -1;

        int seq = nextSequence(ackFile);
        try (PartitionWriter writer = new HotLog(dataDir).writer(tp, FsyncPolicy.ALWAYS, Duration.ofSeconds(1),
                Clock.systemUTC());
             FileChannel acks = FileChannel.open(ackFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                     StandardOpenOption.APPEND)) {
            System.out.println("ready " + seq + " " + args[5]);
            System.out.flush();
            for (long n = 0; stopAfter < 0 || n < stopAfter; n++, seq++) {
                ProducerIdentity producer = new ProducerIdentity(PRODUCER_ID, (short) 0, firstSequence(seq));
                AppendResult r = client
                        ? writer.append(ClientBatchValidator.validate(RecordBatchCodec.encode(0, batch(seq), producer),
                                Integer.MAX_VALUE, BASE_TIMESTAMP), config)
                        : writer.append(batch(seq), producer, config);
                if (n + 1 == haltBeforeAckAfter) {
                    Runtime.getRuntime().halt(128 + 9);
                }
                ByteBuffer line = ByteBuffer.wrap((seq + " " + r.baseOffset() + " " + r.lastOffset() + " "
                        + r.duplicate() + "\n").getBytes(StandardCharsets.UTF_8));
                while (line.hasRemaining()) {
                    acks.write(line);
                }
                if (n == 0) {
                    // Tells the test this life has recovered and made progress; its kill comes at a random moment after.
                    System.out.println("first-ack " + seq);
                    System.out.flush();
                }
            }
        }
        System.out.println("done " + seq);
    }

    /** The sequence after the last complete ack line; a torn last line (killed mid-write) is cut off. */
    static int nextSequence(Path ackFile) throws IOException {
        if (!Files.exists(ackFile)) {
            return 0;
        }
        byte[] bytes = Files.readAllBytes(ackFile);
        int end = bytes.length;
        while (end > 0 && bytes[end - 1] != '\n') {
            end--;
        }
        if (end != bytes.length) {
            try (FileChannel ch = FileChannel.open(ackFile, StandardOpenOption.WRITE)) {
                ch.truncate(end);
            }
        }
        String[] lines = new String(Arrays.copyOf(bytes, end), StandardCharsets.UTF_8).split("\n");
        String last = lines[lines.length - 1];
        return last.isEmpty() ? 0 : Integer.parseInt(last.split(" ")[0]) + 1;
    }

    /** The producer sequence of batch {@code seq}'s first record: a sequence counts records (Kafka's numbering). */
    static int firstSequence(int seq) {
        int sum = 0;
        for (int i = 0; i < seq; i++) {
            sum += recordCount(i);
        }
        return sum;
    }

    /** 1..97 records of 600 bytes: batches big enough that a kill can land inside the write. */
    static int recordCount(int seq) {
        return 1 + (int) ((seq * 7919L) % 97);
    }

    static String value(int seq, int record) {
        return "seq-" + seq + "-rec-" + record + "|" + "v".repeat(580);
    }

    static List<AppendRecord> batch(int seq) {
        List<AppendRecord> out = new ArrayList<>();
        for (int k = 0; k < recordCount(seq); k++) {
            out.add(new AppendRecord(null, value(seq, k).getBytes(StandardCharsets.UTF_8), List.of(),
                    BASE_TIMESTAMP + seq));
        }
        return out;
    }
}
