package io.tierlog.sharegroups;

import java.util.List;

/** A share group as GET /v1/share-groups/{group} shows it: its config and each share-partition it has touched. */
public record ShareDescription(String group, ShareGroupConfig config, List<Topic> topics) {
    public record Topic(String topic, List<Partition> partitions) {
    }

    public record Partition(int partition, long startOffset, int available, int leased, long lag) {
    }
}
