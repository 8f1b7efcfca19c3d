package io.tierlog.bench.cold;

import io.tierlog.bench.compare.ManagedProcess;
import io.tierlog.bench.compare.Ports;
import io.tierlog.bench.compare.TierlogService;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;

/**
 * One packaged index-service JVM ({@code java -jar quarkus-run.jar}) on 127.0.0.1 and a free port, with
 * {@code tierlog.cold.store=s3} pointed at {@code s3Endpoint} (path-style, static credentials of
 * {@link EmbeddedS3}), its hot volume in {@code hotDir} and its index and cold chunk cache in {@code indexDir}.
 * Same JVM settings as the {@code compare} benchmark's {@code TierlogService} (1 GiB heap, G1). Waits for
 * {@code /q/health/ready}; {@link #close()} stops it (also on benchmark exit, through {@link ManagedProcess}).
 */
final class ColdService implements AutoCloseable {

    /** The read path's knobs, passed to the service so the raw baselines can use the very same values. */
    record ReadConfig(int chunkBytes, long readAheadBytes, int rangeBytes, int fetchThreads, long cacheBytes) {
    }

    private final ManagedProcess process;
    private final URI baseUri;

    private ColdService(ManagedProcess process, URI baseUri) {
        this.process = process;
        this.baseUri = baseUri;
    }

    /**
     * @param tiering true: upload and evict every second (filling the cold tier); false: no tierer, retention or
     *                orphan collection ({@code tierlog.tiering.enabled=false}), so a replay measurement sees only
     *                the S3 requests of the reads
     */
    static ColdService start(String name, Path runJar, Path hotDir, Path indexDir, Path logFile, URI s3Endpoint,
                             String bucket, String prefix, ReadConfig read, boolean tiering) {
        TierlogService.requireBuilt(runJar, "");
        int port = Ports.freeLoopbackPort();
        List<String> cmd = TierlogService.jvmCommand(port, hotDir, indexDir);
        cmd.addAll(List.of(
                // The replay reads what is already written; fsync policy only slows the fill.
                "-Dtierlog.fsync=never",
                "-Dtierlog.tiering.enabled=" + tiering,
                "-Dtierlog.tiering.interval=1s",
                "-Dtierlog.retention.check-interval=1s",
                "-Dtierlog.tiering.chunk-bytes=" + read.chunkBytes(),
                "-Dtierlog.tiering.read-ahead-bytes=" + read.readAheadBytes(),
                "-Dtierlog.tiering.range-bytes=" + read.rangeBytes(),
                "-Dtierlog.tiering.fetch-threads=" + read.fetchThreads(),
                "-Dtierlog.tiering.cache-bytes=" + read.cacheBytes()));
        TierlogService.Started started = TierlogService.startWithS3Cold(name, cmd, port, s3Endpoint, bucket, prefix,
                runJar, runJar.getParent(), logFile);
        return new ColdService(started.process(), started.baseUri());
    }

    URI baseUri() {
        return baseUri;
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        process.close();
    }
}
