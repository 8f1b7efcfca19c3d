package io.tierlog.access;

import java.util.Locale;
import java.util.Objects;

/**
 * What a request acts on: a topic, a group (consumer or share group), a transactional id (a Kafka producer's
 * {@code transactional.id}) or the cluster itself (tokens, unknown paths, operations endpoints). Printed as in scopes:
 * {@code topic:orders}, {@code group:billing}, {@code transaction:billing-app-0}, {@code cluster}.
 */
public record Resource(Kind kind, String name) {
    /** The cluster: tokens and everything not tied to one topic or group. Only {@code admin:cluster} reaches it. */
    public static final Resource CLUSTER = new Resource(Kind.CLUSTER, "");

    /** Prefix of internal topics ({@code __consumer_offsets}, ...), which only {@code admin:cluster} reaches. */
    public static final String INTERNAL_PREFIX = "__";

    public enum Kind {
        TOPIC, GROUP, TRANSACTION, CLUSTER;

        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public Resource {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
    }

    public static Resource topic(String name) {
        return new Resource(Kind.TOPIC, name);
    }

    public static Resource group(String name) {
        return new Resource(Kind.GROUP, name);
    }

    public static Resource transaction(String transactionalId) {
        return new Resource(Kind.TRANSACTION, transactionalId);
    }

    /** Internal topics start with {@code __}; no scope but {@code admin:cluster} reaches them. */
    public boolean internal() {
        return kind == Kind.TOPIC && name.startsWith(INTERNAL_PREFIX);
    }

    @Override
    public String toString() {
        return kind == Kind.CLUSTER ? "cluster" : kind.id() + ":" + name;
    }
}
