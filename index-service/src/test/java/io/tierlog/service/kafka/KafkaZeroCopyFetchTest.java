package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.service.read.PartitionReads;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Hot batches answered as ranges of their segment files, sent with {@code sendfile} and not read by the service
 * (ADR 0037): a segment deleted while its range is being sent still sends the bytes it had (the open file keeps
 * them), the file is closed once the answer is written and also when the client drops the connection mid-answer, and
 * a byte damaged on disk after the index checked it reaches the client as it is, where kafka-clients' CRC check
 * refuses it (the check moved from the service to the client, as with Kafka's broker); and one answer mixes a cold
 * partition's batches (read into memory) with a hot one's file range, which the client reads alike; a range cut by
 * its byte limit ends with the next batch's first bytes, as Kafka's broker sends it (ADR 0076).
 */
@QuarkusTest
class KafkaZeroCopyFetchTest {
    private static final short V12 = 12; // topics by name
    /** Per partition: far more than the kernel buffers of a loopback connection hold (4 MiB + a 4 KiB receiver). */
    private static final int RECORDS = 220;
    private static final int VALUE_BYTES = 50_000;

    @Inject
    KafkaListener listener;
    @Inject
    PartitionReads reads;
    @Inject
    io.tierlog.tiering.TieredStorage tiered;
    @Inject
    io.vertx.core.Vertx vertx;

    @Test
    void connectionsHaveKafkasSendBufferSoASendfileHandsTheKernelABufferfulAtATime() {
        // Autotuned (megabytes) a fetch's sendfile took 1-2 ms longer per 8 MiB answer (ADR 0044).
        assertThat(listener.options().getSendBufferSize()).isEqualTo(102_400);
    }

    @Test
    @org.junit.jupiter.api.condition.EnabledOnOs(value = org.junit.jupiter.api.condition.OS.LINUX,
            architectures = "amd64")
    void theListenerRunsOnNettysEpollTransportSoSendfileGoesStraightToTheKernel() {
        // Over NIO the same fetches spent their sendfiles in the JDK's transferTo bookkeeping (ADR 0045); every
        // zero-copy test here then sends its file ranges through epoll's own sendfile.
        assertThat(vertx.isNativeTransportEnabled()).as("Vert.x on Netty's epoll transport").isTrue();
    }

    private String topicWithBigHotPartitions(int partitions) throws Exception {
        String topic = KafkaListenerTest.unique("zero-copy");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
        try (KafkaProducer<String, String> p = KafkaClients.producer(listener.port(), "all", "none")) {
            for (int partition = 0; partition < partitions; partition++) {
                for (int i = 0; i < RECORDS; i++) {
                    p.send(new ProducerRecord<>(topic, partition, "k" + i, value(partition, i)));
                }
            }
            p.flush();
        }
        return topic;
    }

    private static String value(int partition, int i) {
        Random random = new Random(partition * 1_000_003L + i);
        StringBuilder sb = new StringBuilder(VALUE_BYTES).append(partition).append(':').append(i).append(':');
        while (sb.length() < VALUE_BYTES) {
            sb.append((char) ('a' + random.nextInt(26)));
        }
        return sb.toString();
    }

    private Path segment(String topic, int partition) {
        io.tierlog.log.TopicPartition tp = new io.tierlog.log.TopicPartition(topic, partition);
        reads.highWatermark(tp); // the index catches up: every batch below its end is checked and visible
        return SegmentFiles.log(reads.hot().log().reader(tp).directory(), 0);
    }

    /** Descriptors of this JVM (the service's too, in a Quarkus test) open on {@code file}, deleted or not. */
    private static long openDescriptors(Path file) throws IOException {
        String name = file.toAbsolutePath().toString();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    return target.equals(name) || target.equals(name + " (deleted)");
                } catch (IOException gone) {
                    return false; // closed while listed
                }
            }).count();
        }
    }

    /**
     * Waits (bounded) until {@code file} is open only {@code held} times (its partition's writer holds the newest
     * segment open); the service closes a sent region's file on its event loop, after the test's read returned.
     */
    private static void awaitOpenOnly(Path file, long held) throws Exception {
        Instant deadline = Instant.now().plusSeconds(20);
        while (openDescriptors(file) > held) {
            assertThat(Instant.now()).as("%s still open", file).isBefore(deadline);
            Thread.sleep(20);
        }
    }

    private static FetchRequest fetchAll(String topic, int partition) {
        return fetch(topic, partition, 64 << 20, (byte) 0);
    }

    /** A full fetch of one partition from offset 0 ({@code isolation} 0 read_uncommitted, 1 read_committed). */
    private static FetchRequest fetch(String topic, int partition, int partitionMaxBytes, byte isolation) {
        FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic().setTopic(topic);
        t.partitions().add(new FetchRequestData.FetchPartition().setPartition(partition).setFetchOffset(0)
                .setPartitionMaxBytes(partitionMaxBytes));
        return new FetchRequest(new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(1)
                .setMaxBytes(64 << 20).setIsolationLevel(isolation).setSessionId(0).setSessionEpoch(-1)
                .setTopics(List.of(t)), V12);
    }

    /** A topic of one partition holding {@code records} records, each sent alone (a batch each). */
    private String onePartitionTopic(String name, int records, java.util.function.IntFunction<String> value)
            throws Exception {
        String topic = KafkaListenerTest.unique(name);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        try (KafkaProducer<String, String> p = KafkaClients.producer(listener.port(), "all", "none")) {
            for (int i = 0; i < records; i++) {
                p.send(new ProducerRecord<>(topic, 0, "k" + i, value.apply(i))).get();
            }
        }
        return topic;
    }

    private static RequestHeader send(RawKafka raw, FetchRequest request) throws IOException {
        RequestHeader header = new RequestHeader(ApiKeys.FETCH, request.version(), "raw", 1);
        raw.send(header, request);
        return header;
    }

    @Test
    void aSegmentDeletedWhileItsRangeIsSentStillSendsItsBytesAndItsFileIsClosedAfter() throws Exception {
        String topic = topicWithBigHotPartitions(1);
        Path segment = segment(topic, 0);
        long writer = openDescriptors(segment);
        try (RawKafka raw = new RawKafka(listener.port(), 4096)) {
            RequestHeader header = send(raw, fetchAll(topic, 0));
            DataInputStream in = new DataInputStream(raw.input());
            int size = in.readInt();
            assertThat(size).isGreaterThan(RECORDS * VALUE_BYTES);
            // The answer is being written and cannot all fit in the kernel's buffers: its region holds the file.
            assertThat(openDescriptors(segment)).isEqualTo(writer + 1);

            Files.delete(segment); // as retention or a topic deletion would, mid-answer

            byte[] frame = new byte[size];
            in.readFully(frame);
            ByteBuffer body = ByteBuffer.wrap(frame);
            ResponseHeader.parse(body, header.apiKey().responseHeaderVersion(V12));
            FetchResponse response = FetchResponse.parse(new ByteBufferAccessor(body), V12);
            FetchResponseData.PartitionData p = response.data().responses().get(0).partitions().get(0);
            assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
            int i = 0;
            for (RecordBatch batch : ((Records) p.records()).batches()) {
                batch.ensureValid();
                for (Record r : batch) {
                    assertThat(r.offset()).isEqualTo(i);
                    assertThat(StandardCharsets.UTF_8.decode(r.value()).toString()).isEqualTo(value(0, i));
                    i++;
                }
            }
            assertThat(i).isEqualTo(RECORDS);
        }
        awaitOpenOnly(segment, writer);
    }

    @Test
    void aClientThatDropsTheConnectionMidAnswerLeavesNoFileOpen() throws Exception {
        String topic = topicWithBigHotPartitions(1);
        Path segment = segment(topic, 0);
        long writer = openDescriptors(segment);
        try (RawKafka raw = new RawKafka(listener.port(), 4096)) {
            send(raw, fetchAll(topic, 0));
            assertThat(new DataInputStream(raw.input()).readInt()).isGreaterThan(RECORDS * VALUE_BYTES);
            assertThat(openDescriptors(segment)).isEqualTo(writer + 1);
        } // closed with most of the answer unsent
        awaitOpenOnly(segment, writer);
    }

    @Test
    void aByteDamagedOnDiskAfterIndexingIsSentAsItIsAndRefusedByTheClientsCrcCheck() throws Exception {
        String topic = onePartitionTopic("zero-copy-crc", 20, i -> "value-" + i + "-intact");
        Path segment = segment(topic, 0); // indexed, so every batch's CRC was checked once
        byte[] file = Files.readAllBytes(segment);
        int at = indexOf(file, "value-7-intact".getBytes(StandardCharsets.UTF_8));
        assertThat(at).isPositive();
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[]{'X'}), at);
        }

        // The service sends the batch as it is on disk: no partition error, a batch that fails its CRC.
        try (RawKafka raw = new RawKafka(listener.port())) {
            FetchResponse r = raw.call(fetchAll(topic, 0));
            FetchResponseData.PartitionData p = r.data().responses().get(0).partitions().get(0);
            assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
            List<Boolean> valid = new ArrayList<>();
            ((Records) p.records()).batches().forEach(b -> valid.add(b.isValid()));
            assertThat(valid).hasSize(20).containsOnlyOnce(false);
        }

        // A kafka-clients consumer (check.crcs=true, its default) refuses it rather than return its records.
        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(listener.port(), Map.of())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            List<String> read = new ArrayList<>();
            assertThatThrownBy(() -> {
                Instant deadline = Instant.now().plusSeconds(30);
                while (Instant.now().isBefore(deadline)) {
                    for (ConsumerRecord<String, String> rec : consumer.poll(Duration.ofMillis(200))) {
                        read.add(rec.value());
                    }
                }
            }).isInstanceOf(KafkaException.class).hasStackTraceContaining("Record is corrupt (stored crc");
            assertThat(read).as("nothing from the damaged batch on").doesNotContain("value-7-intact", "Xalue-7-intact")
                    .allMatch(v -> v.endsWith("-intact"));
        }
    }

    @Test
    void oneFetchAnswersAColdPartitionFromMemoryAndAHotOneFromItsFileAndTheClientReadsBoth() throws Exception {
        String topic = KafkaListenerTest.unique("zero-copy-mixed");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1)
                    .configs(Map.of("segment.bytes", "4096", "local.retention.bytes", "0")))).all().get();
        }
        // Partition 0 rolls many small segments and is tiered (its offset 0 is then cold); partition 1 stays in its
        // first, unsealed segment (hot).
        try (KafkaProducer<String, String> p = KafkaClients.producer(listener.port(), "all", "none")) {
            for (int i = 0; i < 200; i++) {
                p.send(new ProducerRecord<>(topic, 0, "k" + i, "cold-" + i + "-" + "x".repeat(100))).get();
            }
            for (int i = 0; i < 5; i++) {
                p.send(new ProducerRecord<>(topic, 1, "k" + i, "hot-" + i)).get();
            }
        }
        tiered.runTieringPass();
        tiered.runRetentionPass();
        io.tierlog.log.TopicPartition cold = new io.tierlog.log.TopicPartition(topic, 0);
        assertThat(reads.state(cold).hotStartOffset()).as("partition 0's offset 0 is cold").isPositive();
        Path hotSegment = segment(topic, 1);
        long writer = openDescriptors(hotSegment);

        FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic().setTopic(topic);
        for (int partition = 0; partition < 2; partition++) {
            t.partitions().add(new FetchRequestData.FetchPartition().setPartition(partition).setFetchOffset(0)
                    .setPartitionMaxBytes(1 << 20));
        }
        FetchRequest request = new FetchRequest(new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(1)
                .setMaxBytes(4 << 20).setSessionId(0).setSessionEpoch(-1).setTopics(List.of(t)), V12);
        try (RawKafka raw = new RawKafka(listener.port())) {
            FetchResponse r = raw.call(request);
            Map<Integer, List<String>> values = new java.util.HashMap<>();
            for (FetchResponseData.PartitionData p : r.data().responses().get(0).partitions()) {
                assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
                List<String> got = values.computeIfAbsent(p.partitionIndex(), k -> new ArrayList<>());
                for (RecordBatch batch : ((Records) p.records()).batches()) {
                    batch.ensureValid();
                    for (Record rec : batch) {
                        got.add(rec.offset() + ":" + StandardCharsets.UTF_8.decode(rec.value()));
                    }
                }
            }
            assertThat(values.get(0)).isNotEmpty().startsWith("0:cold-0-" + "x".repeat(100));
            assertThat(values.get(1)).containsExactly("0:hot-0", "1:hot-1", "2:hot-2", "3:hot-3", "4:hot-4");
        }
        awaitOpenOnly(hotSegment, writer);
    }

    @Test
    void aPartitionCutByItsByteLimitEndsWithTheNextBatchsFirstBytesAndConsumersReadEveryRecordOnce() throws Exception {
        int batches = 12;
        String topic = onePartitionTopic("zero-copy-partial", batches, i -> i + "-" + "v".repeat(1_000));
        Path segment = segment(topic, 0);
        byte[] file = Files.readAllBytes(segment);
        int batch = ByteBuffer.wrap(file).getInt(8) + 12; // the first batch's size (records of equal size)
        int limit = 2 * batch + batch / 2;

        // Kafka's broker sends a partition its limit's worth of the log: two whole batches and half the third.
        try (RawKafka raw = new RawKafka(listener.port())) {
            FetchResponse response = raw.call(fetch(topic, 0, limit, (byte) 0));
            FetchResponseData.PartitionData p = response.data().responses().get(0).partitions().get(0);
            Records records = (Records) p.records();
            assertThat(records.sizeInBytes()).isEqualTo(limit);
            assertThat(((MemoryRecords) records).buffer()).isEqualTo(ByteBuffer.wrap(file, 0, limit));
            List<Long> offsets = new ArrayList<>();
            records.batches().forEach(b -> offsets.add(b.baseOffset()));
            assertThat(offsets).as("the third batch, not whole, is not a batch to the client").containsExactly(0L, 1L);
        }

        // A consumer whose every fetch ends in part of a batch reads each record once, in order.
        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(listener.port(),
                Map.of("max.partition.fetch.bytes", Integer.toString(limit)))) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            List<String> read = new ArrayList<>();
            Instant deadline = Instant.now().plusSeconds(30);
            while (read.size() < batches && Instant.now().isBefore(deadline)) {
                for (ConsumerRecord<String, String> rec : consumer.poll(Duration.ofMillis(200))) {
                    read.add(rec.offset() + ":" + rec.value().substring(0, rec.value().indexOf('-')));
                }
            }
            List<String> want = new ArrayList<>();
            for (int i = 0; i < batches; i++) {
                want.add(i + ":" + i);
            }
            assertThat(read).containsExactlyElementsOf(want);
        }
    }

    @Test
    void aReadCommittedFetchSendsNoPartOfABatchAtOrAboveTheLastStableOffset() throws Exception {
        String topic = onePartitionTopic("zero-copy-partial-lso", 2, i -> i + "-" + "v".repeat(1_000));
        java.util.Properties props = new java.util.Properties();
        props.put("bootstrap.servers", "127.0.0.1:" + listener.port());
        props.put("transactional.id", KafkaListenerTest.unique("partial-lso-tx"));
        try (KafkaProducer<String, String> tx = new KafkaProducer<>(props,
                new org.apache.kafka.common.serialization.StringSerializer(),
                new org.apache.kafka.common.serialization.StringSerializer())) {
            tx.initTransactions();
            tx.beginTransaction();
            tx.send(new ProducerRecord<>(topic, 0, "k2", "2-" + "v".repeat(1_000))).get(); // open: offset 2 is the LSO
            int batch = ByteBuffer.wrap(Files.readAllBytes(segment(topic, 0))).getInt(8) + 12;
            int limit = 2 * batch + batch / 2;
            for (byte isolation : new byte[]{0, 1}) {
                try (RawKafka raw = new RawKafka(listener.port())) {
                    FetchResponse response = raw.call(fetch(topic, 0, limit, isolation));
                    FetchResponseData.PartitionData p = response.data().responses().get(0).partitions().get(0);
                    assertThat(p.lastStableOffset()).isEqualTo(isolation == 1 ? 2 : 3);
                    assertThat(p.abortedTransactions()).as("a list for read_committed only, as Kafka's broker answers")
                            .isEqualTo(isolation == 1 ? List.of() : null);
                    assertThat(((Records) p.records()).sizeInBytes()).as("isolation %d", isolation)
                            .isEqualTo(isolation == 1 ? 2 * batch : limit);
                }
            }
            tx.abortTransaction();
        }
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
