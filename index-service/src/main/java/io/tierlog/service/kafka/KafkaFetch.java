package io.tierlog.service.kafka;

import io.tierlog.log.BatchRead;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.ops.ServiceMetrics;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.BatchFetch;
import io.tierlog.service.read.FetchResult;
import io.tierlog.service.read.PartitionReads;
import jakarta.inject.Singleton;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;

/**
 * Fetch and ListOffsets through {@link PartitionReads}, the service's one read path: stored batches are sent as
 * they are, from the hot or the cold tier (a read never spans the two; the client's next fetch continues).
 *
 * <p>Fetch sessions are not kept: every answer carries session id 0, which tells a client to send full fetches,
 * as Kafka allows. A fetch that finds fewer than {@code min.bytes} waits up to {@code max.wait.ms} on the
 * {@link AppendWatcher} for any of its partitions to grow (no thread is held while it waits), then reads again,
 * until it has {@code min.bytes} or the wait is over. A partition error answers at once, as Kafka does.
 */
@Singleton
public class KafkaFetch {
    private final PartitionReads reads;
    private final AppendWatcher watcher;
    private final ExecutorService readPool;
    private final ServiceMetrics metrics;
    private final KafkaTopics topics;
    private final int maxRecords;

    public KafkaFetch(PartitionReads reads, AppendWatcher watcher, ServiceThreads threads, ServiceMetrics metrics,
                      TopicStore topics, TierlogConfig config) {
        this.reads = reads;
        this.watcher = watcher;
        this.readPool = threads.reads();
        this.metrics = metrics;
        this.topics = new KafkaTopics(topics);
        this.maxRecords = config.fetch().maxRecordsLimit();
    }

    CompletableFuture<KafkaApis.Reply> fetch(FetchRequest request, short version) {
        FetchRequestData data = request.data();
        long deadline = System.nanoTime() + Math.max(0, data.maxWaitMs()) * 1_000_000L;
        return CompletableFuture.supplyAsync(() -> round(data), readPool)
                .thenCompose(round -> untilEnough(data, round, deadline));
    }

    /** Answers with {@code round} if it is enough or time is up; else releases it, waits for appends, reads again. */
    private CompletableFuture<KafkaApis.Reply> untilEnough(FetchRequestData data, Round round, long deadline) {
        long remainingMs = (deadline - System.nanoTime()) / 1_000_000L;
        if (round.bytes >= Math.max(1, data.minBytes()) || round.anyError || remainingMs <= 0 || round.waitOn.isEmpty()) {
            return CompletableFuture.completedFuture(round.reply());
        }
        round.release();
        List<CompletableFuture<Boolean>> waits = new ArrayList<>(round.waitOn.size());
        for (Position p : round.waitOn) {
            waits.add(watcher.awaitBeyond(p.tp, p.offset, Duration.ofMillis(remainingMs)));
        }
        return CompletableFuture.anyOf(waits.toArray(CompletableFuture[]::new))
                .thenApplyAsync(woken -> {
                    waits.forEach(w -> w.cancel(false));
                    return round(data);
                }, readPool)
                .thenCompose(next -> untilEnough(data, next, deadline));
    }

    private record Position(TopicPartition tp, long offset) {
    }

    /** One read of every partition of the request, with the memory it holds until its response is encoded. */
    private final class Round {
        final FetchResponseData out = new FetchResponseData().setSessionId(0);
        final List<BatchRead> held = new ArrayList<>();
        final List<Position> waitOn = new ArrayList<>();
        int bytes;
        int records;
        boolean anyError;
        final long started = System.nanoTime();

        void release() {
            held.forEach(BatchRead::close);
            held.clear();
        }

        KafkaApis.Reply reply() {
            metrics.fetched(records, bytes, System.nanoTime() - started);
            return new KafkaApis.Reply(out, this::release);
        }
    }

    private Round round(FetchRequestData data) {
        Round round = new Round();
        int budget = data.maxBytes() <= 0 ? Integer.MAX_VALUE : data.maxBytes();
        try {
            for (FetchRequestData.FetchTopic asked : data.topics()) {
                FetchResponseData.FetchableTopicResponse topicOut = new FetchResponseData.FetchableTopicResponse()
                        .setTopic(asked.topic()).setTopicId(asked.topicId());
                TopicMetadata topic = null;
                RuntimeException topicError = null;
                try {
                    topic = topics.resolve(asked.topic(), asked.topicId());
                } catch (RuntimeException e) {
                    topicError = e;
                }
                for (FetchRequestData.FetchPartition p : asked.partitions()) {
                    FetchResponseData.PartitionData out = new FetchResponseData.PartitionData()
                            .setPartitionIndex(p.partition()).setRecords(KafkaRecords.none()).setHighWatermark(-1)
                            .setLastStableOffset(-1).setLogStartOffset(-1).setPreferredReadReplica(-1);
                    try {
                        if (topicError != null) {
                            throw topicError;
                        }
                        topic.requirePartition(p.partition());
                        TopicPartition tp = new TopicPartition(topic.name(), p.partition());
                        int maxBytes = Math.min(p.partitionMaxBytes(), budget);
                        if (budget <= 0) {
                            // The request's max.bytes is spent: the extent only, as Kafka answers.
                            long hw = reads.highWatermark(tp);
                            out.setHighWatermark(hw).setLastStableOffset(hw).setLogStartOffset(reads.logStartOffset(tp));
                        } else {
                            BatchFetch f = reads.fetchBatches(tp, p.fetchOffset(), maxRecords, Math.max(1, maxBytes));
                            BatchRead batches = f.batches();
                            round.held.add(batches);
                            out.setHighWatermark(f.highWatermark()).setLastStableOffset(f.highWatermark())
                                    .setLogStartOffset(f.logStartOffset());
                            if (!batches.isEmpty()) {
                                out.setRecords(KafkaRecords.of(batches.buffer()));
                                round.bytes += batches.length();
                                round.records += batches.records();
                                budget -= batches.length();
                            } else {
                                round.waitOn.add(new Position(tp, p.fetchOffset()));
                            }
                        }
                    } catch (RuntimeException e) {
                        round.anyError = true;
                        out.setErrorCode(KafkaErrors.of(e).code());
                        if (KafkaErrors.unwrap(e) instanceof TierlogException t && t.extra().get("highWatermark") != null) {
                            out.setHighWatermark(((Number) t.extra().get("highWatermark")).longValue())
                                    .setLogStartOffset(((Number) t.extra().get("logStartOffset")).longValue());
                        }
                    }
                    topicOut.partitions().add(out);
                }
                round.out.responses().add(topicOut);
            }
        } catch (RuntimeException e) {
            round.release();
            throw e;
        }
        return round;
    }

    /** Earliest (-2), latest (-1), earliest still hot (-4), or the first offset at or after a timestamp. */
    ListOffsetsResponse listOffsets(ListOffsetsRequest request) {
        ListOffsetsResponseData out = new ListOffsetsResponseData();
        for (ListOffsetsRequestData.ListOffsetsTopic asked : request.data().topics()) {
            ListOffsetsResponseData.ListOffsetsTopicResponse topicOut =
                    new ListOffsetsResponseData.ListOffsetsTopicResponse().setName(asked.name());
            for (ListOffsetsRequestData.ListOffsetsPartition p : asked.partitions()) {
                ListOffsetsResponseData.ListOffsetsPartitionResponse r =
                        new ListOffsetsResponseData.ListOffsetsPartitionResponse().setPartitionIndex(p.partitionIndex())
                                .setLeaderEpoch(-1).setTimestamp(-1).setOffset(-1);
                try {
                    TopicMetadata topic = topics.byName(asked.name());
                    topic.requirePartition(p.partitionIndex());
                    TopicPartition tp = new TopicPartition(topic.name(), p.partitionIndex());
                    long ts = p.timestamp();
                    if (ts == ListOffsetsRequest.EARLIEST_TIMESTAMP) {
                        r.setOffset(Math.min(reads.logStartOffset(tp), reads.highWatermark(tp)));
                    } else if (ts == ListOffsetsRequest.LATEST_TIMESTAMP) {
                        r.setOffset(reads.highWatermark(tp));
                    } else if (ts == ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP) {
                        r.setOffset(reads.state(tp).hotStartOffset());
                    } else if (ts >= 0) {
                        long offset = reads.offsetForTimestamp(tp, ts);
                        if (offset < reads.highWatermark(tp)) {
                            FetchResult found = reads.fetch(tp, offset, 1, 1 << 20);
                            if (!found.records().isEmpty()) {
                                LogRecord first = found.records().get(0);
                                r.setOffset(first.offset()).setTimestamp(first.timestamp());
                            }
                        }
                    } else {
                        r.setErrorCode(Errors.UNSUPPORTED_VERSION.code());
                    }
                } catch (RuntimeException e) {
                    r.setErrorCode(KafkaErrors.of(e).code());
                }
                topicOut.partitions().add(r);
            }
            out.topics().add(topicOut);
        }
        return new ListOffsetsResponse(out);
    }
}
