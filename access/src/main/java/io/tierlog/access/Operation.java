package io.tierlog.access;

import java.util.Locale;

/**
 * What a request does, as named in a scope's first part. Topic operations: {@code produce}, {@code fetch} (fetch,
 * stream, offsets, keys), {@code describe}, {@code create}, {@code alter}, {@code delete}; group operations (consumer
 * and share groups): {@code read}, {@code commit}, {@code delete}; transactional ids: {@code produce} (use it: Kafka's
 * WRITE) and {@code describe}; {@code admin} on the cluster allows everything.
 */
public enum Operation {
    PRODUCE, FETCH, DESCRIBE, CREATE, ALTER, DELETE, READ, COMMIT, ADMIN;

    /** The scope spelling, e.g. {@code produce}. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The operation spelled {@code id}, or null when there is none. */
    static Operation parse(String id) {
        for (Operation o : values()) {
            if (o.id().equals(id)) {
                return o;
            }
        }
        return null;
    }

    /** Whether this operation exists on resources of {@code kind} (a scope pairing others is refused). */
    boolean appliesTo(Resource.Kind kind) {
        return switch (kind) {
            case TOPIC -> this == PRODUCE || this == FETCH || this == DESCRIBE || this == CREATE || this == ALTER
                    || this == DELETE;
            case GROUP -> this == READ || this == COMMIT || this == DELETE;
            case TRANSACTION -> this == PRODUCE || this == DESCRIBE;
            case CLUSTER -> this == ADMIN;
        };
    }
}
