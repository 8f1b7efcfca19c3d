package io.tierlog.service.kafka;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.read.HotTier;
import io.tierlog.service.topics.TopicAdmin;
import jakarta.inject.Singleton;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsResponseData;
import org.apache.kafka.common.requests.DescribeLogDirsRequest;
import org.apache.kafka.common.requests.DescribeLogDirsResponse;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * DescribeLogDirs: the hot volume is each broker's one log directory, named {@value #LOG_DIR} (an answer never
 * carries a path), with the volume's total and usable bytes and the hot bytes of every partition this instance is
 * advertised as leading ({@link KafkaCluster#leaderOf}), so a tool that sums over the brokers counts each partition
 * once. The cold tier is not a log directory: Kafka's tiered storage leaves remote bytes out of DescribeLogDirs too.
 * Offset lag is 0 and no replica is a future one. Blocking (segment listings): runs on a pool thread.
 */
@Singleton
public class KafkaLogDirs {
    static final String LOG_DIR = "tierlog-hot";

    private final HotTier hot;
    private final TopicAdmin admin;
    private final KafkaTopics topics;
    private final Path dataDir;

    public KafkaLogDirs(HotTier hot, TopicAdmin admin, TopicStore topicStore, TierlogConfig config) {
        this.hot = hot;
        this.admin = admin;
        this.topics = new KafkaTopics(topicStore);
        this.dataDir = config.dataDir();
    }

    /**
     * @param visible the topics a request for all of them shows (the caller may describe them); a request naming
     *                topics was checked before ({@link KafkaAccess})
     */
    DescribeLogDirsResponse describe(DescribeLogDirsRequest request, KafkaCluster cluster, Predicate<String> visible) {
        DescribeLogDirsResponseData.DescribeLogDirsResult dir = new DescribeLogDirsResponseData.DescribeLogDirsResult()
                .setLogDir(LOG_DIR);
        try {
            FileStore store = Files.getFileStore(dataDir);
            dir.setTotalBytes(store.getTotalSpace()).setUsableBytes(store.getUsableSpace());
        } catch (IOException e) {
            // Sizes of the volume unknown: Kafka's "not set" (-1), the partitions are still listed.
        }
        for (Asked asked : asked(request.data(), visible)) {
            DescribeLogDirsResponseData.DescribeLogDirsTopic topic =
                    new DescribeLogDirsResponseData.DescribeLogDirsTopic().setName(asked.topic.name());
            for (int p : asked.partitions) {
                if (p < 0 || p >= asked.topic.partitions()
                        || cluster.leaderOf(asked.topic.name(), p).nodeId() != cluster.self().nodeId()) {
                    continue; // not a replica of this broker, as Kafka leaves out partitions it does not host
                }
                topic.partitions().add(new DescribeLogDirsResponseData.DescribeLogDirsPartition().setPartitionIndex(p)
                        .setPartitionSize(hot.stats(new TopicPartition(asked.topic.name(), p)).bytes())
                        .setOffsetLag(0).setIsFutureKey(false));
            }
            if (!topic.partitions().isEmpty()) {
                dir.topics().add(topic);
            }
        }
        return new DescribeLogDirsResponse(new DescribeLogDirsResponseData().setResults(List.of(dir)));
    }

    private record Asked(TopicMetadata topic, List<Integer> partitions) {
    }

    private List<Asked> asked(DescribeLogDirsRequestData data, Predicate<String> visible) {
        List<Asked> out = new ArrayList<>();
        if (data.topics() == null) {
            for (TopicMetadata t : admin.listPublic()) {
                if (visible.test(t.name())) {
                    List<Integer> all = new ArrayList<>(t.partitions());
                    for (int p = 0; p < t.partitions(); p++) {
                        all.add(p);
                    }
                    out.add(new Asked(t, all));
                }
            }
            return out;
        }
        for (DescribeLogDirsRequestData.DescribableLogDirTopic t : data.topics()) {
            find(t.topic()).ifPresent(topic -> out.add(new Asked(topic, t.partitions())));
        }
        return out;
    }

    private Optional<TopicMetadata> find(String name) {
        try {
            return Optional.of(topics.resolve(name, null));
        } catch (RuntimeException unknown) {
            return Optional.empty(); // an unknown topic is left out, as Kafka does
        }
    }
}
