package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectNotFoundException;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

/**
 * Loads and commits partition manifests in the bucket.
 *
 * <h2>Commit protocol</h2>
 * The current manifest is the highest version under {@code <topic>/<partition>/manifest/}. A change is
 * committed by creating version {@code current + 1} with {@link ObjectStore#putIfAbsent}: of any number of racing
 * committers (threads, processes, nodes) exactly one creates it; the others reload and re-apply their change to
 * the winner's manifest (or find it no longer needed). Versions are therefore linear and every commit is a
 * complete, immutable snapshot: a reader never sees a half-made manifest, and a crash before the create leaves
 * the previous version current.
 *
 * <h2>Pruning</h2>
 * Versions older than the newest {@code keepVersions} are deleted once they are older than {@code grace}.
 * The grace protects a committer that listed an old current, stalled, and would otherwise re-create a just-pruned
 * key: its stale version would be lower than the current one and so never current (and the segments only it
 * references become orphans, which are collected). Safety of hot deletion does not depend on this: hot segments
 * are deleted only after a fresh {@link #load} shows them committed.
 *
 * <h2>Cache</h2>
 * {@link #cached} serves the manifest last seen from memory. Once it is older than {@value #REFRESH_MS} ms (so that
 * commits by other nodes are seen), the next {@link #cached} starts a reload on the refresh executor and still
 * answers with what it has: every fetch asks for its partition's extent, and none should wait for a LIST and a GET
 * (two S3 round trips, a synchronous stall per partition every 30 s before 2026-11-30), nor, while the store hangs,
 * for their timeouts. A stale manifest is safe for reads, which reload on a miss. A reload that fails keeps the old
 * manifest for another interval. Only a partition never seen waits for its first load.
 *
 * <h2>Partitions that never sealed a segment</h2>
 * Every manifest version that references data is made from a sealed hot segment (the tierer uploads only segments
 * with a newer one after them), and a hot segment is removed only after its commit. So while a partition's hot log on
 * the volume (shared by every instance) holds no segment or one segment starting at offset 0, and this process knows
 * no manifest of a version above 0 for it, no instance has committed anything for it: {@link #cachedUnlessNeverSealed}
 * answers {@link Manifest#EMPTY} without a store request and without a background reload. Idle topics that were never tiered
 * (most of {@code __consumer_offsets}, a topic below its first segment roll) then cost nothing per retention or
 * compaction pass, where each of their partitions cost a LIST every {@value #REFRESH_MS} ms before (ADR 0033).
 *
 * <p>Thread-safe. {@link #load} always lists the bucket.
 */
public final class ManifestStore {
    private static final Logger LOG = LoggerFactory.getLogger(ManifestStore.class);
    private static final int MAX_COMMIT_ATTEMPTS = 20;

    private final ObjectStore store;
    private final Clock clock;
    private final int keepVersions;
    private final Duration grace;
    /** How long a cached manifest is served before {@link #cached} lists the bucket again. */
    static final long REFRESH_MS = 30_000;

    /** A manifest and when the bucket was last asked for a newer one. */
    private record Cached(Manifest manifest, long checkedAtMs) {
    }

    private final Map<TopicPartition, Cached> cache = new ConcurrentHashMap<>();
    private final Executor refresher;
    /** Partitions with a reload queued or running on the refresher. */
    private final Set<TopicPartition> refreshing = ConcurrentHashMap.newKeySet();
    /** The partition's hot segment bases as now listed on the volume (see class: never sealed). */
    private final Function<TopicPartition, List<Long>> hotBases;

    /** @param refresher runs the reloads of stale manifests ({@code Runnable::run}: in the reading thread) */
    public ManifestStore(ObjectStore store, Clock clock, int keepVersions, Duration grace, Executor refresher) {
        this(store, clock, keepVersions, grace, refresher, null);
    }

    /**
     * @param hotBases the hot segment bases of a partition on the volume, ascending; lets {@link #cachedUnlessNeverSealed} answer a
     *                 partition that never sealed a segment without the store (see class). Null: always ask the store.
     */
    public ManifestStore(ObjectStore store, Clock clock, int keepVersions, Duration grace, Executor refresher,
                         Function<TopicPartition, List<Long>> hotBases) {
        if (keepVersions < 1) {
            throw new IllegalArgumentException("keepVersions must be >= 1");
        }
        this.store = store;
        this.clock = clock;
        this.keepVersions = keepVersions;
        this.grace = grace;
        this.refresher = refresher;
        this.hotBases = hotBases;
    }

    /** The current manifest, freshly listed from the bucket ({@link Manifest#EMPTY} if none). Updates the cache. */
    public Manifest load(TopicPartition tp) {
        List<ObjectMetadata> versions = versions(tp);
        for (int i = versions.size() - 1; i >= 0; i--) {
            ObjectKey key = versions.get(i).key();
            try {
                Manifest m = Manifest.fromJson(store.get(key));
                // A listing is the truth as of now (also when it is lower: the topic was deleted and re-created).
                cache.put(tp, new Cached(m, clock.millis()));
                return m;
            } catch (ObjectNotFoundException e) {
                // pruned (or deleted with the topic) between list and get: a newer one exists or none does
                LOG.debug("{}: manifest {} vanished while loading", tp, key);
            }
        }
        // Cached too: partitions that were never tiered must not cost a LIST on every read.
        cache.put(tp, new Cached(Manifest.EMPTY, clock.millis()));
        return Manifest.EMPTY;
    }

    /**
     * The manifest this process last saw; loaded now if it has none, reloaded in the background if it is older than
     * {@value #REFRESH_MS} ms (see class). May be stale; fine for reads, which reload on a miss.
     *
     * @throws ObjectStoreUnavailableException only for a partition never loaded, while the store is unavailable
     */
    public Manifest cached(TopicPartition tp) {
        Cached c = cache.get(tp);
        if (c == null) {
            return load(tp);
        }
        if (clock.millis() - c.checkedAtMs() > REFRESH_MS) {
            refreshLater(tp);
        }
        return c.manifest();
    }

    /**
     * Loads the manifests of these partitions in the background, so that their first reads find them in memory
     * (a service that starts knowing its topics, from its volume or the bucket, warms them all). Partitions already
     * in memory (the restore loads those it starts at the cold end) are left to the usual refresh.
     */
    public void warm(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            if (!cache.containsKey(tp)) {
                refreshLater(tp);
            }
        }
    }

    /**
     * As {@link #cached}, but a partition that never sealed a segment (see class) is answered {@link Manifest#EMPTY}
     * from one listing of its hot directory, with no store request and no background reload: for the background
     * passes, which visit every partition every interval. Reads use {@link #cached}, which the read path's router
     * does not need the hot listing for.
     */
    public Manifest cachedUnlessNeverSealed(TopicPartition tp) {
        Cached c = cache.get(tp);
        if ((c == null || c.manifest().version() == 0) && hotBases != null && neverSealed(hotBases.apply(tp))) {
            return Manifest.EMPTY;
        }
        return cached(tp);
    }

    /**
     * As {@link #cachedUnlessNeverSealed(TopicPartition)} with the partition's hot segment bases as the caller has
     * just listed them (all of them, ascending), so the read path, which lists them anyway, adds no listing.
     */
    public Manifest cachedUnlessNeverSealed(TopicPartition tp, List<Long> listedHotBases) {
        Cached c = cache.get(tp);
        if ((c == null || c.manifest().version() == 0) && neverSealed(listedHotBases)) {
            return Manifest.EMPTY;
        }
        return cached(tp);
    }

    /** No segment, or one segment at offset 0: nothing of the partition can have been committed (see class). */
    static boolean neverSealed(List<Long> hotBases) {
        return hotBases.isEmpty() || hotBases.size() == 1 && hotBases.get(0) == 0;
    }

    private void refreshLater(TopicPartition tp) {
        if (!refreshing.add(tp)) {
            return;
        }
        try {
            refresher.execute(() -> {
                try {
                    load(tp);
                } catch (RuntimeException e) {
                    // Keep serving what we have, and look again after another interval rather than on every read.
                    cache.computeIfPresent(tp, (k, c) -> new Cached(c.manifest(), clock.millis()));
                    LOG.debug("{}: manifest reload failed; keeping version {}: {}", tp,
                            peek(tp).map(Manifest::version).orElse(0L), e.toString());
                } finally {
                    refreshing.remove(tp);
                }
            });
        } catch (RejectedExecutionException e) {
            refreshing.remove(tp); // shutting down
        }
    }

    /** The cached manifest, if this process has loaded one; never touches the store. */
    public Optional<Manifest> peek(TopicPartition tp) {
        return Optional.ofNullable(cache.get(tp)).map(Cached::manifest);
    }

    /** Forgets the cached manifests of a topic (after deletion). */
    public void forgetTopic(String topic) {
        cache.keySet().removeIf(tp -> tp.topic().equals(topic));
    }

    /**
     * Applies {@code change} to the current manifest and commits the result as the next version, retrying against
     * whatever another committer made current. {@code change} must be a pure function of its input; returning
     * empty means "nothing to do".
     *
     * @return the manifest current after this call: the one committed, or the one on which change said no
     */
    public Manifest commit(TopicPartition tp, Function<Manifest, Optional<Manifest>> change) {
        Manifest current = load(tp);
        for (int attempt = 1; attempt <= MAX_COMMIT_ATTEMPTS; attempt++) {
            Optional<Manifest> next = change.apply(current);
            if (next.isEmpty()) {
                return current;
            }
            Manifest candidate = next.get();
            if (candidate.version() != current.version() + 1) {
                throw new IllegalStateException("a change must produce version " + (current.version() + 1));
            }
            if (store.putIfAbsent(BucketLayout.manifest(tp, candidate.version()), candidate.toJson())) {
                remember(tp, candidate);
                LOG.debug("{}: committed manifest v{} (cold {}..{}, logStartOffset {})", tp, candidate.version(),
                        candidate.coldStart(), candidate.coldEnd(), candidate.logStartOffset());
                return candidate;
            }
            LOG.debug("{}: manifest v{} was committed by someone else; reloading", tp, candidate.version());
            current = load(tp);
        }
        throw new IllegalStateException(tp + ": manifest commit lost " + MAX_COMMIT_ATTEMPTS + " races in a row");
    }

    /** Deletes old manifest versions (see class). Returns how many were deleted. */
    public int prune(TopicPartition tp) {
        List<ObjectMetadata> versions = versions(tp);
        long cutoff = clock.millis() - grace.toMillis();
        List<ObjectKey> doomed = new ArrayList<>();
        for (int i = 0; i < versions.size() - keepVersions; i++) {
            if (versions.get(i).lastModified().toEpochMilli() < cutoff) {
                doomed.add(versions.get(i).key());
            }
        }
        if (!doomed.isEmpty()) {
            store.deleteAll(doomed);
        }
        return doomed.size();
    }

    private List<ObjectMetadata> versions(TopicPartition tp) {
        return store.listAll(BucketLayout.manifestPrefix(tp))
                .filter(m -> BucketLayout.manifestVersion(m.key()).isPresent())
                .toList();
    }

    /** Keeps the newest manifest seen, so a concurrent older load never replaces a newer one. */
    private void remember(TopicPartition tp, Manifest m) {
        Cached fresh = new Cached(m, clock.millis());
        cache.merge(tp, fresh, (old, neu) -> neu.manifest().version() >= old.manifest().version() ? neu : old);
    }
}
