package io.tierlog.tiering;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Per-topic read/write locks of one process: tiering and retention work on a topic under its read lock, topic
 * deletion takes the write lock, so a deletion never races an upload that would re-create objects under the
 * deleted prefix. (Across processes the order "hot metadata first, then objects" plus the orphan collector
 * covers the rest; see ADR 0004.) Thread-safe.
 */
final class TopicGuards {
    private final Map<String, ReadWriteLock> locks = new ConcurrentHashMap<>();

    ReadWriteLock of(String topic) {
        return locks.computeIfAbsent(topic, t -> new ReentrantReadWriteLock());
    }
}
