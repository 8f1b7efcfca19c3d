package io.tierlog.service.ops;

import io.tierlog.ingest.BatchProduceResult;
import io.tierlog.ingest.ProduceResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.service.metrics.ServiceMetrics;
import io.tierlog.service.read.AppendIndexing;
import io.tierlog.service.read.AppendWatcher;
import jakarta.inject.Singleton;

import java.util.Arrays;

/**
 * What every produce edge does once an append has returned (the JSON produce, the record-batch produce, the Kafka
 * listener's Produce): wakes this process's long-polls and streams waiting on each partition appended to, queues
 * the catch-up of its index ({@link AppendIndexing}), then records the request in the produce meters. One step, so
 * that no edge forgets a part. Thread-safe.
 */
@Singleton
public class PostAppend {
    private final AppendWatcher watcher;
    private final AppendIndexing indexing;
    private final ServiceMetrics metrics;

    public PostAppend(AppendWatcher watcher, AppendIndexing indexing, ServiceMetrics metrics) {
        this.watcher = watcher;
        this.indexing = indexing;
        this.metrics = metrics;
    }

    /** After a JSON produce, whose records may have landed in several partitions of {@code topic}. */
    public void appended(String topic, ProduceResult result, int bodyBytes, long startNanos) {
        // The end of each partition appended to, in an array by partition: a map boxed two numbers per record.
        int records = result.recordCount();
        int maxPartition = -1;
        for (int i = 0; i < records; i++) {
            maxPartition = Math.max(maxPartition, result.partitionAt(i));
        }
        long[] ends = new long[maxPartition + 1];
        Arrays.fill(ends, -1);
        for (int i = 0; i < records; i++) {
            int p = result.partitionAt(i);
            ends[p] = Math.max(ends[p], result.offsetAt(i) + 1);
        }
        for (int p = 0; p < ends.length; p++) {
            if (ends[p] >= 0) {
                partitionAppended(new TopicPartition(topic, p), ends[p]);
            }
        }
        metrics.produced(records, bodyBytes, System.nanoTime() - startNanos);
    }

    /** After a record-batch produce, all of whose records landed in one partition. */
    public void appended(String topic, BatchProduceResult result, int bodyBytes, long startNanos) {
        partitionAppended(new TopicPartition(topic, result.partition()), result.lastOffset() + 1);
        metrics.produced(result.recordCount(), bodyBytes, System.nanoTime() - startNanos);
    }

    private void partitionAppended(TopicPartition tp, long end) {
        watcher.appended(tp, end);
        indexing.appended(tp);
    }
}
