package io.tierlog.ingest;

import io.tierlog.log.ErrorType;
import io.tierlog.log.NoSpaceLeft;
import io.tierlog.log.TierlogException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Decides whether a produce request may append, before it appends anything: the backpressure of the hot tier.
 * A request is refused with {@code 503 hot-tier-full} and a {@code Retry-After} (never dropped, never buffered: see
 * ADR 0010) while any of these holds, checked in this order:
 * <ol>
 *   <li>{@link Reason#NO_SPACE}: an append failed for lack of space ({@link NoSpaceLeft}); the writer truncated
 *       what it had written. Remembered until the next volume sample, so that the requests right behind it are
 *       refused without touching the disk.</li>
 *   <li>{@link Reason#USED_RATIO}: the hot volume is fuller than {@code tierlog.hot.max-used-ratio}, measured as
 *       {@code 1 - usable / total} of its {@link FileStore} (usable space excludes blocks reserved for root).</li>
 *   <li>{@link Reason#TIERING_BACKLOG}: sealed segments awaiting upload exceed
 *       {@code tierlog.tiering.max-pending-bytes} (the supplier given; the tierer computes it on each pass).</li>
 * </ol>
 * The volume is sampled at most once per {@link #SAMPLE_INTERVAL} of the injected clock, by whichever request finds
 * the sample due (two {@code statfs} calls), so a request costs a volatile read. Recovery needs nothing: the first
 * sample after space is freed (or the first tiering pass after the backlog shrinks) admits requests again.
 *
 * <p>Reads, tiering and retention never pass through here. Thread-safe.
 */
public final class ProduceAdmission {
    private static final Logger LOG = LoggerFactory.getLogger(ProduceAdmission.class);
    /** How stale a volume sample may be. */
    public static final Duration SAMPLE_INTERVAL = Duration.ofSeconds(1);
    /** {@code tierlog.hot.max-used-ratio}'s default. */
    public static final double DEFAULT_MAX_USED_RATIO = 0.90;
    /** The {@code Retry-After} of a refusal: one sample interval, the soonest the answer can change. */
    public static final Duration DEFAULT_RETRY_AFTER = SAMPLE_INTERVAL;

    /** Why produce is refused; {@link #slug()} is the problem's {@code reason} member and the metric label. */
    public enum Reason {
        NO_SPACE(NoSpaceLeft.REASON), USED_RATIO("used-ratio"), TIERING_BACKLOG("tiering-backlog");

        private final String slug;

        Reason(String slug) {
            this.slug = slug;
        }

        public String slug() {
            return slug;
        }
    }

    /** A refusal in force: its reason and a detail for the client and the health check (no path in it). */
    public record Refusal(Reason reason, String detail) {
    }

    /** One measurement of the hot volume. */
    public record VolumeSample(long totalBytes, long usableBytes, long atMillis) {
        public double usedRatio() {
            return totalBytes <= 0 ? 0 : 1 - (double) usableBytes / totalBytes;
        }
    }

    private final Path hotDir;
    private final double maxUsedRatio;
    private final BooleanSupplier backlogExceeded;
    private final Clock clock;
    private final long retryAfterSeconds;
    private final Map<Reason, LongAdder> rejected = new EnumMap<>(Reason.class);
    private volatile VolumeSample sample;
    private volatile boolean noSpace;
    private volatile Reason lastLogged;
    private FileStore store;

    /**
     * @param hotDir          a directory on the hot volume (created if missing)
     * @param maxUsedRatio    refuse while the used share of the volume is above this, in {@code (0, 1]}; 1 never
     *                        refuses on the ratio (a failed write still does)
     * @param backlogExceeded true while the upload backlog is over its limit
     * @param retryAfter      the {@code Retry-After} of every refusal, rounded up to whole seconds
     */
    public ProduceAdmission(Path hotDir, double maxUsedRatio, BooleanSupplier backlogExceeded, Duration retryAfter,
                            Clock clock) {
        if (!(maxUsedRatio > 0 && maxUsedRatio <= 1)) {
            throw new IllegalArgumentException("tierlog.hot.max-used-ratio must be in (0, 1]: " + maxUsedRatio);
        }
        this.hotDir = hotDir;
        this.maxUsedRatio = maxUsedRatio;
        this.backlogExceeded = backlogExceeded;
        this.clock = clock;
        this.retryAfterSeconds = Math.max(1, (retryAfter.toMillis() + 999) / 1000);
        for (Reason r : Reason.values()) {
            rejected.put(r, new LongAdder());
        }
    }

    /** Refuses only after a write failed for lack of space (no ratio, no backlog): for callers that set neither. */
    public static ProduceAdmission noSpaceOnly(Path hotDir, Clock clock) {
        return new ProduceAdmission(hotDir, 1.0, () -> false, DEFAULT_RETRY_AFTER, clock);
    }

    /**
     * Runs {@code append} if produce is admitted, else throws the refusal; a {@code hot-tier-full} from the append
     * itself (a write out of space) is remembered and rethrown with {@code Retry-After}.
     *
     * @throws TierlogException {@code hot-tier-full} with {@code reason} and {@value TierlogException#RETRY_AFTER_SECONDS}
     */
    public <T> T admitted(Supplier<T> append) {
        admit();
        try {
            return append.get();
        } catch (TierlogException e) {
            if (e.type() != ErrorType.HOT_TIER_FULL) {
                throw e;
            }
            noSpace = true;
            rejected.get(Reason.NO_SPACE).increment();
            logOnce(Reason.NO_SPACE, e.getMessage());
            throw refusal(e.getMessage(), Reason.NO_SPACE, e);
        }
    }

    /** Throws the refusal in force, if any. */
    public void admit() {
        Optional<Refusal> r = refusal();
        if (r.isPresent()) {
            rejected.get(r.get().reason()).increment();
            logOnce(r.get().reason(), r.get().detail());
            throw refusal(r.get().detail(), r.get().reason(), null);
        }
        if (lastLogged != null) {
            lastLogged = null;
            LOG.info("produce admitted again");
        }
    }

    /** The refusal in force now (sampling the volume if the sample is due), or empty if produce is admitted. */
    public Optional<Refusal> refusal() {
        VolumeSample s = currentSample();
        if (noSpace) {
            return Optional.of(new Refusal(Reason.NO_SPACE, "the hot volume ran out of space during an append; "
                    + "nothing of the request was appended"));
        }
        if (s != null && s.usedRatio() > maxUsedRatio) {
            return Optional.of(new Refusal(Reason.USED_RATIO, String.format(java.util.Locale.ROOT,
                    "the hot volume is %.1f%% full, above tierlog.hot.max-used-ratio = %.2f", 100 * s.usedRatio(),
                    maxUsedRatio)));
        }
        if (backlogExceeded.getAsBoolean()) {
            return Optional.of(new Refusal(Reason.TIERING_BACKLOG, "the backlog of segments awaiting upload to the "
                    + "cold tier exceeds tierlog.tiering.max-pending-bytes"));
        }
        return Optional.empty();
    }

    /** The hot volume as last sampled, sampling it first if the sample is due (all zero if it cannot be measured). */
    public VolumeSample volume() {
        return currentSample();
    }

    public double maxUsedRatio() {
        return maxUsedRatio;
    }

    /** Requests refused for {@code reason} since start. */
    public long rejected(Reason reason) {
        return rejected.get(reason).sum();
    }

    private TierlogException refusal(String detail, Reason reason, Throwable cause) {
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("reason", reason.slug());
        extra.put(TierlogException.RETRY_AFTER_SECONDS, retryAfterSeconds);
        return new TierlogException(ErrorType.HOT_TIER_FULL, detail, extra, cause);
    }

    private VolumeSample currentSample() {
        VolumeSample s = sample;
        long now = clock.millis();
        if (s != null && now - s.atMillis() < SAMPLE_INTERVAL.toMillis() && now >= s.atMillis()) {
            return s;
        }
        synchronized (this) {
            s = sample;
            if (s != null && now - s.atMillis() < SAMPLE_INTERVAL.toMillis() && now >= s.atMillis()) {
                return s;
            }
            try {
                if (store == null) {
                    Files.createDirectories(hotDir);
                    store = Files.getFileStore(hotDir);
                }
                s = new VolumeSample(store.getTotalSpace(), store.getUsableSpace(), now);
            } catch (IOException | RuntimeException e) {
                // Not knowing is no reason to refuse: a write that really fails for space is still caught.
                LOG.debug("cannot measure the hot volume", e);
                s = new VolumeSample(0, 0, now);
            }
            sample = s;
            // A failed write is forgotten once a fresh sample shows room again.
            if (noSpace && (s.usableBytes() > 0 || s.totalBytes() == 0)) {
                noSpace = false;
            }
            return s;
        }
    }

    private void logOnce(Reason reason, String detail) {
        if (lastLogged != reason) {
            lastLogged = reason;
            LOG.warn("produce refused with 503 hot-tier-full ({}): {}", reason.slug(), detail);
        }
    }
}
