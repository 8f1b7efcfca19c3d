package io.tierlog.log.internal.io;

import java.io.IOException;

/**
 * Group commit for one file: appenders that wrote up to some position wait until a force that began after their
 * write has completed, and one force covers every write made before it began. While one appender forces, the others
 * append (under the writer's lock, which the force does not hold) and then wait for the next force, which the first
 * of them to get there runs for all. With {@code fsync=always} and several producers on one partition, each request
 * otherwise waited for every earlier request's own fsync, one after another.
 *
 * <p>Positions are this writer's view of the file's end after its write; a force flushes the whole file, so writes
 * of other processes before it are covered as well. Thread-safe.
 */
public final class GroupSync {
    /** Makes the file's data durable ({@code FileChannel.force(false)}, or its equivalent). */
    @FunctionalInterface
    public interface Force {
        void run() throws IOException;
    }

    private final Force force;
    /** End of the writes made so far; guarded by this. */
    private long written;
    /** End up to which a completed force covers the file; guarded by this. */
    private long durable;
    private boolean forcing;
    private long forces;

    public GroupSync(Force force) {
        this.force = force;
    }

    /** Records that the file holds written bytes up to {@code end}; call before {@link #awaitDurable}. */
    public synchronized void wrote(long end) {
        written = Math.max(written, end);
    }

    /**
     * Returns once the file is durable up to {@code end}: at once if a completed force already covers it, else after
     * the next force, run by this thread or by another one waiting. A failed force fails only the thread that ran it;
     * the waiters then try again themselves.
     */
    public void awaitDurable(long end) throws IOException {
        long target;
        synchronized (this) {
            while (durable < end && forcing) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while waiting for fsync", e);
                }
            }
            if (durable >= end) {
                return;
            }
            forcing = true;
            // Every write up to here has returned, so the force below covers it, this thread's among them.
            target = written;
        }
        boolean done = false;
        try {
            force.run();
            done = true;
        } finally {
            synchronized (this) {
                forcing = false;
                if (done) {
                    durable = Math.max(durable, target);
                    forces++;
                }
                notifyAll();
            }
        }
    }

    /** Forces completed so far; for tests and metrics. */
    public synchronized long forces() {
        return forces;
    }
}
