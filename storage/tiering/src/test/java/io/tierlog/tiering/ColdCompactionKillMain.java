package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.s3.S3ObjectStore;
import io.tierlog.testkit.ManualClock;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A cold-compaction process for {@link ColdCompactionKillTest}: one cold pass over partition 0 of a topic, against
 * the parent's S3Proxy, at a fixed time. When the pass reaches {@code <step>} for the {@code <occurrence>}-th time it
 * prints {@code at <step> <occurrence>} and waits on stdin to be killed with SIGKILL; a pass that never gets there
 * prints {@code done ...} and exits 0.
 *
 * <p>Arguments: {@code <s3-endpoint> <bucket> <data-dir> <topic> <now-ms> <step> <occurrence> <seed>}.
 */
public final class ColdCompactionKillMain {
    private ColdCompactionKillMain() {
    }

    public static void main(String[] args) throws Exception {
        URI endpoint = URI.create(args[0]);
        String bucket = args[1];
        Path data = Path.of(args[2]);
        TopicPartition tp = new TopicPartition(args[3], 0);
        ManualClock clock = new ManualClock(Long.parseLong(args[4]));
        ColdCompactor.Step stopAt = ColdCompactor.Step.valueOf(args[5]);
        int occurrence = Integer.parseInt(args[6]);
        long seed = Long.parseLong(args[7]);
        TieringConfig config = ColdCompactionHarness.CONFIG;
        ExecutorService refresher = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "manifest-refresh");
            t.setDaemon(true);
            return t;
        });
        try (S3ObjectStore store = new S3ObjectStore(ColdCompactionHarness.client(endpoint, null), bucket, "cluster")) {
            TopicStore topics = new TopicStore(data, clock);
            AttributingObjectStore attributed = new AttributingObjectStore(store);
            ManifestStore manifests = new ManifestStore(attributed, clock, config.keepManifestVersions(),
                    config.orphanGrace(), refresher);
            int[] seen = {0};
            ColdCompactor compactor = new ColdCompactor(topics, attributed, manifests, new TopicGuards(), config,
                    new ColdCompactionStats(), clock, new Random(seed), (step, at) -> {
                        if (step == stopAt && ++seen[0] == occurrence) {
                            System.out.println("at " + step + " " + occurrence);
                            System.out.flush();
                            try {
                                System.in.read(); // the parent kills us here
                            } catch (IOException e) {
                                throw new UncheckedIOException(e);
                            }
                            Runtime.getRuntime().halt(3); // stdin closed: not the kill the test is about
                        }
                    });
            ColdCompactor.Result r = compactor.compact(tp, topics.get(tp.topic()).config());
            System.out.println("done " + r + " (" + stopAt + " reached " + seen[0] + " times)");
        }
    }
}
