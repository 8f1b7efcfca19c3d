package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;
import io.tierlog.objectstore.ObjectKey;

import java.util.OptionalLong;

/**
 * Where everything lives in the bucket. Keys are relative to the store's root; the deployment's
 * {@code tierlog.cold.s3.prefix} is applied by the store itself. The bucket is self-describing:
 *
 * <pre>
 * &lt;topic&gt;/topic.json                                         topic name, id, partitions, config
 * &lt;topic&gt;/&lt;partition&gt;/segments/&lt;base 20d&gt;-&lt;uploadId&gt;.log     segment bytes as written hot (RecordBatch v2)
 * &lt;topic&gt;/&lt;partition&gt;/segments/&lt;base 20d&gt;-&lt;uploadId&gt;.index   sidecar: sparse offset/position/timestamp entries
 * &lt;topic&gt;/&lt;partition&gt;/manifest/&lt;version 20d&gt;.json            immutable manifest versions; highest = current
 * </pre>
 * Numbers are zero-padded to 20 digits so lexical (listing) order is numeric order. The upload id makes every
 * upload's keys unique, so two tierers never overwrite each other's objects: only a manifest commit decides
 * which objects are data. Stateless.
 */
public final class BucketLayout {
    static final String TOPIC_JSON = "topic.json";
    static final String SEGMENT_SUFFIX = ".log";
    static final String INDEX_SUFFIX = ".index";
    static final String MANIFEST_SUFFIX = ".json";

    private BucketLayout() {
    }

    /** {@code <topic>/}: everything of a topic; used to delete it. */
    public static String topicPrefix(String topic) {
        return topic + "/";
    }

    public static ObjectKey topicMetadata(String topic) {
        return ObjectKey.of(topic + "/" + TOPIC_JSON);
    }

    /** The topic named by a {@code <topic>/topic.json} key, or null if the key is not one. */
    static String topicOfMetadataKey(ObjectKey key) {
        String v = key.value();
        int slash = v.indexOf('/');
        if (slash <= 0 || !v.substring(slash + 1).equals(TOPIC_JSON)) {
            return null;
        }
        return v.substring(0, slash);
    }

    public static String partitionPrefix(TopicPartition tp) {
        return tp.topic() + "/" + tp.partition() + "/";
    }

    public static String segmentsPrefix(TopicPartition tp) {
        return partitionPrefix(tp) + "segments/";
    }

    public static String manifestPrefix(TopicPartition tp) {
        return partitionPrefix(tp) + "manifest/";
    }

    public static ObjectKey segment(TopicPartition tp, long baseOffset, String uploadId) {
        return ObjectKey.of(segmentsPrefix(tp) + String.format("%020d-%s%s", baseOffset, uploadId, SEGMENT_SUFFIX));
    }

    public static ObjectKey index(TopicPartition tp, long baseOffset, String uploadId) {
        return ObjectKey.of(segmentsPrefix(tp) + String.format("%020d-%s%s", baseOffset, uploadId, INDEX_SUFFIX));
    }

    public static ObjectKey manifest(TopicPartition tp, long version) {
        return ObjectKey.of(manifestPrefix(tp) + String.format("%020d%s", version, MANIFEST_SUFFIX));
    }

    /** The version of a manifest key, if the key is one. */
    static OptionalLong manifestVersion(ObjectKey key) {
        String v = key.value();
        int slash = v.lastIndexOf('/');
        String name = v.substring(slash + 1);
        if (name.length() != 20 + MANIFEST_SUFFIX.length() || !name.endsWith(MANIFEST_SUFFIX)) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(name.substring(0, 20)));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }
}
