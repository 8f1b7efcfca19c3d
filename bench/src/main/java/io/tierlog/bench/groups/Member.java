package io.tierlog.bench.groups;

import java.util.Set;

/** One group member of a trial, on either system: it consumes its partitions on its own thread. */
interface Member extends AutoCloseable {
    String name();

    /** The partitions this member owns now (its current assignment, after any revocation it has carried out). */
    Set<Integer> owned();

    /** Dies: stops heartbeating at once, without leaving the group (as a killed process). */
    void kill();

    /** Leaves the group cleanly (end of the benchmark). */
    @Override
    void close();
}
