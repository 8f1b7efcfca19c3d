package io.tierlog.log.io;

import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;

/**
 * One version of a small file that is only ever replaced whole (written beside it and renamed over it): its identity,
 * size and modification time, from one {@code stat}. A reader that parsed the file may keep the parse while a new
 * {@code stat} shows the same version, instead of reading the file again.
 *
 * <p>A rename gives the file a new inode, but a freed inode can be reused and the file system stamps times at the
 * granularity of its clock tick (or the server's, on NFS), so two versions written within one tick may look equal.
 * A parse is therefore kept only when it was read at least {@link #SETTLE} after the version's modification time by
 * the reader's clock ({@link #settledBy}), as git distrusts an index entry written in the same second as its file
 * ("racily clean"); until then the file is read each time.
 *
 * @param fileKey       the file system's identity of the file (device and inode), or null where it has none
 * @param modifiedNanos the modification time, nanoseconds since the epoch
 */
public record FileVersion(Object fileKey, long size, long modifiedNanos) {
    /** How old a version must be before an equal {@code stat} is trusted to mean the same content. */
    public static final Duration SETTLE = Duration.ofSeconds(1);

    public static FileVersion of(BasicFileAttributes attrs) {
        Instant modified = attrs.lastModifiedTime().toInstant();
        return new FileVersion(attrs.fileKey(), attrs.size(), modified.getEpochSecond() * 1_000_000_000L
                + modified.getNano());
    }

    /**
     * Whether content read at {@code readAtMillis} (by the reader's clock, before the {@code stat} that gave this
     * version) is this version's for good: the file was modified at least {@link #SETTLE} before, so a later write
     * cannot carry the same modification time. A file system without file keys is never settled.
     */
    public boolean settledBy(long readAtMillis) {
        return fileKey != null && Math.floorDiv(modifiedNanos, 1_000_000L) <= readAtMillis - SETTLE.toMillis();
    }
}
