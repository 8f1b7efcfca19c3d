package io.tierlog.service.sharegroups;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.log.Names;
import io.tierlog.log.TopicPartition;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.api.LeaseAnswerJson;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.http.Requests;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.service.topics.TopicAdmin;
import io.tierlog.sharegroups.LeaseWriter;
import io.tierlog.sharegroups.ShareGroups;
import jakarta.inject.Singleton;

import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import static io.tierlog.service.sharegroups.ShareGroupsResource.DEFAULT_LEASE_MS;
import static io.tierlog.service.sharegroups.ShareGroupsResource.DEFAULT_MAX_RECORDS;
import static io.tierlog.service.sharegroups.ShareGroupsResource.MAX_LEASE_MS;
import static io.tierlog.service.sharegroups.ShareGroupsResource.MAX_WAIT_MS;

/**
 * The lease call of api.md, "Share groups" (checks, lease on the read pool, long-poll), for both edges that answer
 * it: {@link ShareLeaseRoute} and {@link ShareGroupsResource#lease}. Thread-safe.
 */
@Singleton
public class ShareLeases {
    private static final Set<String> LEASE_FIELDS = Set.of("maxRecords", "leaseMs", "waitMs");
    /** A lease call's {@code leaseMs} when it names none: the group's own, else {@code DEFAULT_LEASE_MS}. */
    private static final long GROUPS_LEASE = -1;

    private final ShareGroups shares;
    private final PartitionReads reads;
    private final AppendWatcher watcher;
    private final ExecutorService readPool;
    private final int maxRecordsLimit;
    private final Clock clock;
    private final Duration recheck;

    public ShareLeases(ShareGroups shares, PartitionReads reads, AppendWatcher watcher,
                       ServiceThreads threads, TierlogConfig config, Clock clock) {
        this.shares = shares;
        this.reads = reads;
        this.watcher = watcher;
        this.readPool = threads.reads();
        this.maxRecordsLimit = config.fetch().maxRecordsLimit();
        this.clock = clock;
        this.recheck = config.share().longPollRecheck();
    }

    /**
     * Checks the request (on the calling thread: a bad one throws) and leases on the read pool; {@code finish} turns
     * the answer into the response on the thread that rendered it (the answer is in that thread's buffer).
     */
    <T> CompletionStage<T> lease(String group, String topic, byte[] body, Function<LeaseAnswerJson, T> finish) {
        return lease(group, topic, body, () -> LeaseAnswerJson.start(reads), answer -> { }, finish);
    }

    /**
     * {@link #lease(String, String, byte[], Function)} with the answer's form chosen by the caller: {@code start}
     * begins an answer on the leasing thread, {@code finish} turns it into the response there, and {@code abandon}
     * gives back what an answer holds when its lease call fails after records were written into it.
     */
    <W extends LeaseWriter, T> CompletionStage<T> lease(String group, String topic, byte[] body, Supplier<W> start,
                                                       Consumer<W> abandon, Function<W, T> finish) {
        Names.requireValidGroup(group);
        TopicAdmin.requirePublic(topic);
        ObjectNode req = Requests.object(body, LEASE_FIELDS);
        int maxRecords = (int) ShareJson.optionalLong(req, "maxRecords", DEFAULT_MAX_RECORDS, 1, maxRecordsLimit);
        long asked = ShareJson.optionalLong(req, "leaseMs", GROUPS_LEASE, 1, MAX_LEASE_MS);
        long waitMs = ShareJson.optionalLong(req, "waitMs", 0, 0, MAX_WAIT_MS);
        long deadline = System.nanoTime() + waitMs * 1_000_000;
        Answers<W, T> answers = new Answers<>(start, abandon, finish);
        return CompletableFuture.supplyAsync(() -> {
            // A call that names no lease gets the group's (its config's lease.ms, a file read: not on the event loop).
            long leaseMs = asked != GROUPS_LEASE ? asked : shares.config(group).leaseMsOr(DEFAULT_LEASE_MS);
            return attempt(group, topic, maxRecords, leaseMs, deadline, answers);
        }, readPool).thenCompose(r -> r);
    }

    /** How one lease call's answer is begun, given up and turned into its response. */
    private record Answers<W extends LeaseWriter, T>(Supplier<W> start, Consumer<W> abandon, Function<W, T> finish) {
    }

    /**
     * One lease attempt; when it gets nothing and time is left, waits for whichever comes first: an append to the
     * topic, an acknowledgement committed by this instance on the group's share-partitions (a release, or an accept
     * that moves a full window), the moment a lease runs out or a redelivery delay ends (by the injected clock), or
     * {@code tierlog.share.long-poll-recheck} (for releases made through other instances, which nothing here sees).
     */
    private <W extends LeaseWriter, T> CompletionStage<T> attempt(String group, String topic, int maxRecords,
                                                                  long leaseMs, long deadline, Answers<W, T> answers) {
        CompletableFuture<Void> changed = shares.awaitChange(group, topic); // taken first: no ack is missed
        W answer = answers.start().get();
        ShareGroups.Delivered got;
        try {
            got = shares.leaseOrWake(group, topic, maxRecords, leaseMs, answer);
        } catch (RuntimeException e) {
            changed.cancel(false);
            answers.abandon().accept(answer);
            throw e;
        }
        long remaining = deadline - System.nanoTime();
        if (got.records() > 0 || remaining <= 0 || watcher.isClosed()) {
            changed.cancel(false);
            return CompletableFuture.completedFuture(answers.finish().apply(answer));
        }
        answers.abandon().accept(answer); // nothing leased: nothing held, but the answer is not used again
        // The high watermarks the lease read before leasing: an append since then wakes the wait below.
        long[] highWatermarks = got.highWatermarks();
        for (int p = 0; p < highWatermarks.length; p++) {
            if (highWatermarks[p] < 0) {
                highWatermarks[p] = reads.highWatermark(new TopicPartition(topic, p)); // not visited (not expected)
            }
        }
        long waitNanos = Math.min(remaining, recheck.toNanos());
        if (got.wakeAtMs() != Long.MAX_VALUE) {
            long untilWake = Math.max(0, got.wakeAtMs() - clock.millis()) + 1; // +1: the expiry check is "now >= end"
            waitNanos = Math.min(waitNanos, TimeUnit.MILLISECONDS.toNanos(untilWake));
        }
        Duration wait = Duration.ofNanos(waitNanos);
        CompletableFuture<?>[] wakers = new CompletableFuture<?>[highWatermarks.length + 1];
        for (int p = 0; p < highWatermarks.length; p++) {
            wakers[p] = watcher.awaitBeyond(new TopicPartition(topic, p), highWatermarks[p], wait);
        }
        wakers[highWatermarks.length] = changed;
        return CompletableFuture.anyOf(wakers).thenComposeAsync(any -> {
            for (CompletableFuture<?> f : wakers) {
                f.cancel(false); // unregisters the waiters that did not fire
            }
            return attempt(group, topic, maxRecords, leaseMs, deadline, answers);
        }, readPool);
    }
}
