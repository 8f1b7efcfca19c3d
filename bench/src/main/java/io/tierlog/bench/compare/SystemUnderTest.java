package io.tierlog.bench.compare;

import java.time.Duration;
import java.util.List;

/**
 * One log system as the comparison drives it. Each implementation uses its own client the way that client is
 * meant to be used; the workload (records, value bytes, partitions, producers, durability) is the same.
 * Implementations are used from one orchestrating thread; they start their own worker threads.
 */
public interface SystemUnderTest extends AutoCloseable {

    /** A short name for tables: "Kafka", "Tierlog". */
    String name();

    /** Whether this system can create a topic with the given durability (Tierlog's is per process). */
    boolean supports(Durability durability);

    /** Creates an empty topic; segments large enough (1 GiB) that a run never rolls into tiering work. */
    void createTopic(String topic, int partitions, Durability durability) throws Exception;

    /** Produces the spec's records and returns once every one is acknowledged; fails on any error. */
    ProduceStats produce(String topic, ProduceSpec spec) throws Exception;

    /**
     * Reads every partition of the topic from offset 0 to the end it had when the read started, one reader
     * thread per partition, and checks the count equals {@code expectedRecords}.
     */
    ConsumeStats consume(String topic, int partitions, long expectedRecords, Duration timeout) throws Exception;

    /** Produces one record per key (in order) and answers the partition the system placed each on. */
    int[] partitionsForKeys(String topic, List<String> keys) throws Exception;

    /** Deletes the topic and its data. */
    void deleteTopic(String topic) throws Exception;

    /** The OS process ids doing the server work, so the runner can wait for background work to settle. */
    List<Long> serverPids();

    @Override
    void close();
}
