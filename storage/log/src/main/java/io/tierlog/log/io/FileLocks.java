package io.tierlog.log.io;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exclusive file locks between processes sharing the hot volume (partition writers, group and share-group state).
 *
 * <p>Linux detects deadlocks of POSIX locks per process, not per thread: process A (thread 1 holding X, thread 2
 * waiting for Y) and process B (holding Y, waiting for X) look like a cycle, and the kernel fails one wait with
 * {@code EDEADLK} ("Resource deadlock avoided") although no thread waits for itself and nothing is stuck. Such a wait
 * is tried again after a short random pause that lets the other side go on; a real deadlock cannot arise while every
 * caller takes its locks in one global order, as the callers of this class do.
 *
 * <p>Public on purpose: group and share-group state files on the hot volume are locked between processes with the
 * same retry ({@code storage/groups}, {@code storage/sharegroups}).
 */
public final class FileLocks {
    private static final int MAX_FALSE_DEADLOCK_RETRIES = 10_000;

    private FileLocks() {
    }

    /** Blocks until {@code channel}'s whole file is locked exclusively; the caller releases the lock. */
    public static FileLock lock(FileChannel channel) throws IOException {
        for (int attempt = 0; ; attempt++) {
            try {
                return channel.lock();
            } catch (IOException e) {
                if (attempt >= MAX_FALSE_DEADLOCK_RETRIES || !String.valueOf(e.getMessage()).contains("deadlock")) {
                    throw e;
                }
                try {
                    Thread.sleep(1 + ThreadLocalRandom.current().nextInt(5));
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }
}
