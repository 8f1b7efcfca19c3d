package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;
import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link ManifestStore#cached}: a reader never waits for the bucket once it has a manifest. Two stores over one
 * real (filesystem) bucket play two nodes; {@link FaultyStore} in front of the reading node's holds or fails its
 * LISTs.
 */
class ManifestRefreshTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final Duration STALE = Duration.ofMillis(ManifestStore.REFRESH_MS + 1);

    @TempDir
    Path tmp;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private final ExecutorService refresher = Executors.newSingleThreadExecutor();
    private FilesystemObjectStore bucket;
    private FaultyStore readerSide;
    private ManifestStore reader;
    private ManifestStore otherNode;

    @BeforeEach
    void setUp() {
        bucket = new FilesystemObjectStore(tmp.resolve("bucket"));
        readerSide = new FaultyStore(bucket);
        reader = new ManifestStore(readerSide, clock, 10, Duration.ofHours(1), refresher);
        otherNode = new ManifestStore(bucket, clock, 10, Duration.ofHours(1), Runnable::run);
    }

    @AfterEach
    void tearDown() throws Exception {
        refresher.shutdownNow();
        assertThat(refresher.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        bucket.close();
    }

    @Test
    void aStaleManifestIsServedAtOnceWhileItsReloadWaitsForTheStore() throws Exception {
        commitOnOtherNode(5);
        assertThat(reader.cached(TP).logStartOffset()).as("first use loads").isEqualTo(5);
        commitOnOtherNode(9);
        clock.advance(STALE);

        CountDownLatch listing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        readerSide.runBefore((op, key, n) -> op.equals("list"), () -> {
            listing.countDown();
            await(release);
        });
        // The store now holds every LIST; the read must still answer, from memory.
        assertThat(reader.cached(TP).logStartOffset()).isEqualTo(5);
        assertThat(listing.await(10, TimeUnit.SECONDS)).as("the reload started").isTrue();
        assertThat(reader.cached(TP).logStartOffset()).as("still served while the reload hangs").isEqualTo(5);

        release.countDown();
        pollUntil(() -> reader.cached(TP).logStartOffset() == 9);
        assertThat(reader.peek(TP).map(Manifest::version)).contains(2L);
    }

    @Test
    void aFailedReloadKeepsTheManifestAndIsNotRetriedOnEveryRead() throws Exception {
        commitOnOtherNode(5);
        reader.cached(TP);
        clock.advance(STALE);
        readerSide.failWhen((op, key, n) -> op.equals("list"));
        readerSide.resetCounts();

        assertThat(reader.cached(TP).logStartOffset()).isEqualTo(5);
        pollUntil(() -> readerSide.count("list") == 1 && quiet());
        for (int i = 0; i < 100; i++) {
            assertThat(reader.cached(TP).logStartOffset()).isEqualTo(5);
        }
        quiet();
        assertThat(readerSide.count("list")).as("one attempt per interval").isEqualTo(1);

        readerSide.heal();
        commitOnOtherNode(7);
        clock.advance(STALE);
        reader.cached(TP);
        pollUntil(() -> reader.cached(TP).logStartOffset() == 7);
    }

    @Test
    void aPartitionNeverLoadedWaitsForItsFirstLoadAndWarmingLoadsAheadOfReads() throws Exception {
        readerSide.failWhen((op, key, n) -> op.equals("list"));
        assertThatThrownBy(() -> reader.cached(TP)).isInstanceOf(ObjectStoreUnavailableException.class);
        readerSide.heal();
        commitOnOtherNode(3);
        TopicPartition other = new TopicPartition("orders", 1);

        reader.warm(List.of(TP, other));
        pollUntil(() -> reader.peek(TP).isPresent() && reader.peek(other).isPresent());
        readerSide.resetCounts();
        assertThat(reader.cached(TP).logStartOffset()).isEqualTo(3);
        assertThat(reader.cached(other)).isEqualTo(Manifest.EMPTY);
        assertThat(readerSide.count("list") + readerSide.count("get")).as("served from memory").isZero();
        reader.warm(List.of(TP, other));
        quiet();
        assertThat(readerSide.count("list") + readerSide.count("get")).as("warming what is loaded asks nothing")
                .isZero();
    }

    private void commitOnOtherNode(long logStartOffset) {
        otherNode.commit(TP, m -> Optional.of(new Manifest(m.version() + 1, logStartOffset, m.segments())));
    }

    /** True once the refresher has nothing queued or running (a no-op task on it has run). */
    private boolean quiet() {
        try {
            refresher.submit(() -> { }).get(10, TimeUnit.SECONDS);
            return true;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static void pollUntil(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within 10 s");
            }
            Thread.sleep(5);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
