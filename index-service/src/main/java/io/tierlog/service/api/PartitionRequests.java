package io.tierlog.service.api;

import io.tierlog.http.Encoding;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.http.Requests;
import io.tierlog.service.topics.TopicAdmin;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/** Resolves {@code {topic}/partitions/{p}} path segments to a partition that exists, or the api.md 4xx. */
public final class PartitionRequests {
    private PartitionRequests() {
    }

    public static TopicPartition resolve(TopicStore topics, String topic, String partition) {
        TopicMetadata meta = topics.get(topic);
        int p;
        try {
            p = Integer.parseInt(partition);
        } catch (NumberFormatException e) {
            throw new TierlogException(ErrorType.UNKNOWN_PARTITION, "partition '" + Requests.shorten(partition)
                    + "' is not a partition number of topic '" + topic + "'", Map.of("topic", topic));
        }
        meta.requirePartition(p);
        return new TopicPartition(topic, p);
    }

    /**
     * {@link AppendWatcher#awaitBeyond}, completed with false at once if the topic is gone once the waiter is
     * registered. {@link TopicAdmin} removes a topic's metadata, then wakes its waiters; checking after registering
     * closes the gap in which a reader found the topic, then registered after that wake-up and would wait out
     * its whole timeout.
     */
    public static CompletableFuture<Boolean> awaitBeyond(AppendWatcher watcher, TopicStore topics, TopicPartition tp,
                                                         long offset, Duration timeout) {
        CompletableFuture<Boolean> waiting = watcher.awaitBeyond(tp, offset, timeout);
        if (topics.find(tp.topic()).isEmpty()) {
            waiting.complete(false);
        }
        return waiting;
    }

    /**
     * A fetch's long-poll (api.md, "Fetch"), {@code first} being its first read: that read answers when
     * {@code waitBeyond} gives -1 for it (it found something) or no time is left; else the poll waits until the log
     * grows past the offset {@code waitBeyond} gives, reads again on {@code pool}, and so on, until a read finds
     * something or the wait ends, when that read answers. A read not answered goes to {@code discard}. The reads
     * resolve the partition themselves, so a topic deleted meanwhile answers 404 unknown-topic, not 416.
     */
    static <T> CompletableFuture<T> longPoll(AppendWatcher watcher, TopicStore topics, TopicPartition tp, T first,
                                             long waitMs, Clock clock, Executor pool, Supplier<T> read,
                                             ToLongFunction<T> waitBeyond, Consumer<T> discard) {
        return polled(new Poll<>(watcher, topics, tp, clock.millis() + waitMs, clock, pool, read, waitBeyond, discard),
                first);
    }

    private record Poll<T>(AppendWatcher watcher, TopicStore topics, TopicPartition tp, long deadline, Clock clock,
                           Executor pool, Supplier<T> read, ToLongFunction<T> waitBeyond, Consumer<T> discard) {
    }

    private static <T> CompletableFuture<T> polled(Poll<T> p, T last) {
        long beyond = p.waitBeyond().applyAsLong(last);
        long left = p.deadline() - p.clock().millis();
        if (beyond < 0 || left <= 0) {
            return CompletableFuture.completedFuture(last);
        }
        p.discard().accept(last);
        return awaitBeyond(p.watcher(), p.topics(), p.tp(), beyond, Duration.ofMillis(left))
                .thenComposeAsync(arrived -> {
                    T again = p.read().get();
                    return Boolean.TRUE.equals(arrived) ? polled(p, again) : CompletableFuture.completedFuture(again);
                }, p.pool());
    }

    public static Encoding encoding(String raw) {
        return Encoding.parse(raw, "encoding");
    }
}
