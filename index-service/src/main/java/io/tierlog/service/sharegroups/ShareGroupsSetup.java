package io.tierlog.service.sharegroups;

import io.quarkus.runtime.StartupEvent;
import io.tierlog.ingest.IngestService;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.metrics.Meters;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.sharegroups.ShareGroups;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.time.Clock;
import java.util.concurrent.TimeUnit;

/**
 * Builds {@link ShareGroups} over the hot volume, the service's read path (hot and cold) and produce path (dead
 * letters), with the groups' clock-skew allowance for lease expiry across instances.
 */
@Singleton
public class ShareGroupsSetup {
    private static final int METRICS_REFRESH_SECONDS = 5;

    private final ShareMetrics metrics;
    private final ServiceShareRecords records;

    public ShareGroupsSetup(Meters meters, PartitionReads reads) {
        this.metrics = new ShareMetrics(meters);
        this.records = new ServiceShareRecords(reads);
    }

    @Produces
    @Singleton
    ShareGroups shareGroups(TierlogConfig config, IngestService ingest, Clock clock) {
        ShareGroups shares = new ShareGroups(config.dataDir(), ingest.topics(), records, ingest, clock,
                config.share().maxInFlightRecords(), config.groups().maxClockSkew(), metrics,
                FsyncPolicy.parse(config.fsync()));
        metrics.bind(shares);
        return shares;
    }

    void start(@Observes StartupEvent event, ServiceThreads threads, Clock clock) {
        threads.timers().scheduleWithFixedDelay(() -> threads.reads().execute(() -> metrics.refresh(records, clock)),
                METRICS_REFRESH_SECONDS, METRICS_REFRESH_SECONDS, TimeUnit.SECONDS);
    }
}
