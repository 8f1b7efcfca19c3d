package io.tierlog.log;

import java.util.Locale;

/**
 * When an append is forced to stable storage ({@code tierlog.fsync}).
 * <ul>
 *   <li>{@link #ALWAYS}: the segment is fsynced before the append is acknowledged. An acknowledged record
 *       survives a process crash and a machine or power loss.</li>
 *   <li>{@link #INTERVAL}: the segment is fsynced by the first append at least {@code fsync-interval} after
 *       the previous fsync, and on close. An acknowledged record survives a process crash (it is in the
 *       kernel's page cache); a machine loss can lose the appends of the last interval.</li>
 *   <li>{@link #NEVER}: the kernel writes back when it chooses. Same process-crash guarantee as
 *       {@code INTERVAL}; a machine loss can lose any unwritten data.</li>
 * </ul>
 * On EFS (NFS), a write is sent to the server on fsync or close, so {@code ALWAYS} is the only policy under
 * which another instance on another host is guaranteed to see an acknowledged record.
 */
public enum FsyncPolicy {
    ALWAYS, INTERVAL, NEVER;

    public static FsyncPolicy parse(String value) {
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("tierlog.fsync must be one of always, interval, never: " + value);
        }
    }
}
