package io.tierlog.bench.cold;

import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.ManagedProcess;
import io.tierlog.bench.compare.Ports;
import io.tierlog.bench.compare.TierlogService;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * One packaged index-service JVM ({@code java -jar quarkus-run.jar}) on 127.0.0.1 and a free port, with
 * {@code tierlog.cold.store=s3} pointed at {@code s3Endpoint} (path-style, static credentials of
 * {@link EmbeddedS3}), its hot volume in {@code hotDir} and its index and cold chunk cache in {@code indexDir}.
 * Same JVM settings as the {@code compare} benchmark's {@code TierlogService} (1 GiB heap, G1). Waits for
 * {@code /q/health/ready}; {@link #close()} stops it (also on benchmark exit, through {@link ManagedProcess}).
 */
final class ColdService implements AutoCloseable {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(180); // a loaded 2-core machine starts JVMs slowly

    /** The read path's knobs, passed to the service so the raw baselines can use the very same values. */
    record ReadConfig(int chunkBytes, int readAheadChunks, int fetchThreads, long cacheBytes) {
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
                "-Dtierlog.tiering.read-ahead-chunks=" + read.readAheadChunks(),
                "-Dtierlog.tiering.fetch-threads=" + read.fetchThreads(),
                "-Dtierlog.tiering.cache-bytes=" + read.cacheBytes(),
                "-Dtierlog.cold.s3.bucket=" + bucket,
                "-Dtierlog.cold.s3.prefix=" + prefix,
                "-Dtierlog.cold.store=s3"));
        cmd.addAll(EmbeddedS3.quarkusClientArgs(s3Endpoint));
        cmd.addAll(List.of("-jar", runJar.toAbsolutePath().toString()));
        ManagedProcess process = ManagedProcess.start(name, cmd, runJar.getParent(), logFile);
        URI base = URI.create("http://127.0.0.1:" + port);
        try {
            process.awaitHttpOk(base.resolve("/q/health/ready"), READY_TIMEOUT);
        } catch (RuntimeException e) {
            process.close();
            throw e;
        }
        return new ColdService(process, base);
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
