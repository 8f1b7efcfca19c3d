package io.tierlog.service.ops;

import io.tierlog.ingest.BatchProduceResult;
import io.tierlog.ingest.PartitionOffset;
import io.tierlog.ingest.ProduceResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.service.metrics.ServiceMetrics;
import io.tierlog.service.read.AppendWatcher;
import jakarta.inject.Singleton;

import java.util.Arrays;
import java.util.List;

/**
 * What every produce edge does once an append has returned (the JSON produce, the record-batch produce, the Kafka
 * listener's Produce): wakes this process's long-polls and streams waiting on each partition appended to, then
 * records the request in the produce meters. One step, so that no edge forgets either half. Thread-safe.
 */
@Singleton
public class PostAppend {
    private final AppendWatcher watcher;
    private final ServiceMetrics metrics;

    public PostAppend(AppendWatcher watcher, ServiceMetrics metrics) {
        this.watcher = watcher;
        this.metrics = metrics;
    }

    /** After a JSON produce, whose records may have landed in several partitions of {@code topic}. */
    public void appended(String topic, ProduceResult result, int bodyBytes, long startNanos) {
        // The end of each partition appended to, in an array by partition: a map boxed two numbers per record.
        List<PartitionOffset> offsets = result.offsets();
        int maxPartition = -1;
        for (int i = 0; i < offsets.size(); i++) {
            maxPartition = Math.max(maxPartition, offsets.get(i).partition());
        }
        long[] ends = new long[maxPartition + 1];
        Arrays.fill(ends, -1);
        for (int i = 0; i < offsets.size(); i++) {
            PartitionOffset o = offsets.get(i);
            ends[o.partition()] = Math.max(ends[o.partition()], o.offset() + 1);
        }
        for (int p = 0; p < ends.length; p++) {
            if (ends[p] >= 0) {
                watcher.appended(new TopicPartition(topic, p), ends[p]);
            }
        }
        metrics.produced(result.offsets().size(), bodyBytes, System.nanoTime() - startNanos);
    }

    /** After a record-batch produce, all of whose records landed in one partition. */
    public void appended(String topic, BatchProduceResult result, int bodyBytes, long startNanos) {
        watcher.appended(new TopicPartition(topic, result.partition()), result.lastOffset() + 1);
        metrics.produced(result.recordCount(), bodyBytes, System.nanoTime() - startNanos);
    }
}
