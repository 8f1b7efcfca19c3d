package io.tierlog.sharegroups;

import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.ProduceRecord;
import io.tierlog.ingest.ProduceRequest;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A share group at {@code read_committed} (Kafka's {@code share.isolation.level}) delivers what a read_committed
 * consumer reads: up to the last stable offset, never a record of an aborted transaction; a group at
 * {@code read_uncommitted} (the default) delivers every record up to the high watermark.
 */
class ShareGroupsReadCommittedTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);
    private static final long A = 1001;
    private static final long B = 1002;
    private static final long C = 1003;

    @TempDir
    Path dir;
    IngestService ingest;
    ShareGroups shares;
    final ManualClock clock = new ManualClock(1_000_000);

    @BeforeEach
    void start() {
        ingest = new IngestService(new IngestConfig(dir, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), 1 << 20), clock, 3);
        ingest.topics().create("t", 1, TopicConfig.DEFAULTS);
        shares = new ShareGroups(dir, ingest.topics(), new HotShareRecords(dir), ingest, clock, 2000, Duration.ZERO,
                ShareMeters.NONE);
    }

    @AfterEach
    void stop() {
        ingest.close();
    }

    @Test
    void aReadCommittedGroupGetsCommittedRecordsUpToTheLastStableOffset() {
        plain("p0");                                  // 0
        transactional(A, 0, "a0", "a1");              // 1-2, aborted
        marker(A, false);                             // 3
        transactional(B, 0, "b0", "b1");              // 4-5, committed
        marker(B, true);                              // 6
        transactional(C, 0, "c0");                    // 7, open
        plain("p1");                                  // 8
        shares.configure("committed", committed("earliest"));
        shares.configure("uncommitted", new ShareGroupConfig("earliest", 5, 0, null));

        assertThat(values("committed")).as("the open transaction holds the rest back").containsExactly("p0", "b0", "b1");
        assertThat(values("uncommitted")).containsExactly("p0", "a0", "a1", "b0", "b1", "c0", "p1");

        marker(C, true);                              // 9
        assertThat(values("committed")).containsExactly("c0", "p1");
        assertThat(values("committed")).isEmpty();
    }

    @Test
    void recordsOfAnAbortedTransactionAreNeverDeliveredNorCountedInFlight() {
        for (int i = 0; i < 30; i++) {
            transactional(A, i * 10, values("a", i * 10, 10));
        }
        marker(A, false);
        plain("after");
        shares.configure("g", committed("earliest"));

        // One call passes over all 300 aborted records (ten at a time) and reaches the committed one behind them.
        List<LeasedRecord> leased = shares.lease("g", "t", 10, 30_000);
        assertThat(leased).extracting(l -> string(l.record().value())).containsExactly("after");
        assertThat(leased.get(0).deliveryCount()).isEqualTo(1);
        assertThat(shares.acknowledge("g", "t", List.of(new Ack(leased.get(0).lease(), AckType.ACCEPT))))
                .allMatch(AckResult::ok);
        assertThat(shares.describe("g").orElseThrow().topics().get(0).partitions().get(0).startOffset())
                .as("the window moved past the aborted records and the marker").isEqualTo(302);
    }

    @Test
    void latestForAReadCommittedGroupIsTheLastStableOffset() {
        plain("p0");                                  // 0
        transactional(C, 0, "c0");                    // 1, open
        plain("p1");                                  // 2
        shares.configure("committed", committed("latest"));
        shares.configure("uncommitted", new ShareGroupConfig("latest", 5, 0, null));
        assertThat(values("committed")).isEmpty();
        assertThat(values("uncommitted")).isEmpty();

        marker(C, true);                              // 3
        assertThat(values("committed")).as("from the open transaction on").containsExactly("c0", "p1");
        assertThat(values("uncommitted")).as("from the high watermark on").isEmpty();
    }

    @Test
    void theIsolationIsPartOfTheConfigAndCheckedByName() {
        ShareGroupConfig parsed = ShareGroupConfig.parse(Map.of("isolation", "read_committed"));
        assertThat(parsed.readCommitted()).isTrue();
        assertThat(parsed.toMap()).containsEntry("isolation", "read_committed");
        assertThat(ShareGroupConfig.parse(Map.of()).isolation()).isEqualTo(ShareGroupConfig.READ_UNCOMMITTED);
        assertThatThrownBy(() -> ShareGroupConfig.parse(Map.of("isolation", "serializable")))
                .isInstanceOfSatisfying(TierlogException.class, e -> {
                    assertThat(e.type()).isEqualTo(ErrorType.INVALID_CONFIG);
                    assertThat(e.extra()).containsEntry("field", "isolation");
                });
        assertThatThrownBy(() -> ShareGroupConfig.parse(Map.of("isolation", 1)))
                .isInstanceOfSatisfying(TierlogException.class, e ->
                        assertThat(e.extra()).containsEntry("field", "isolation"));
    }

    private static ShareGroupConfig committed(String start) {
        return new ShareGroupConfig(start, 5, 0, null, ShareGroupConfig.READ_COMMITTED);
    }

    /** Leases everything leasable now and accepts it; the values in offset order. */
    private List<String> values(String group) {
        List<LeasedRecord> leased = shares.lease(group, "t", 1000, 30_000);
        List<Ack> acks = leased.stream().map(l -> new Ack(l.lease(), AckType.ACCEPT)).toList();
        if (!acks.isEmpty()) {
            assertThat(shares.acknowledge(group, "t", acks)).allMatch(AckResult::ok);
        }
        return leased.stream().map(l -> string(l.record().value())).toList();
    }

    private void plain(String value) {
        ingest.produce("t", new ProduceRequest(List.of(new ProduceRecord(null,
                value.getBytes(StandardCharsets.UTF_8), List.of(), 0, null)), Optional.empty()));
    }

    private void transactional(long producerId, int sequence, String... values) {
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, producerId, (short) 0, sequence, true, false,
                RecordBatch.NO_PARTITION_LEADER_EPOCH, buffer.capacity());
        for (String v : values) {
            builder.append(clock.millis(), null, v.getBytes(StandardCharsets.UTF_8));
        }
        // The coordinator's check that the transaction holds the partition is the listener's; here it always does.
        ingest.produceTransactionalBatches("t", 0, builder.build().buffer(), () -> {
        });
    }

    private void marker(long producerId, boolean commit) {
        ingest.appendMarker(TP, new TransactionMarker(producerId, (short) 0, commit, 0));
    }

    private static String[] values(String prefix, int from, int n) {
        String[] out = new String[n];
        for (int i = 0; i < n; i++) {
            out[i] = prefix + (from + i);
        }
        return out;
    }

    private static String string(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
