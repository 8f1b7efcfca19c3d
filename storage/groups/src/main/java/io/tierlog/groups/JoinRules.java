package io.tierlog.groups;

/**
 * Who names a joining member, when a join may take a static member's instance id from the member holding it, and
 * who sets its session. The protocols differ here (ADR 0047): HTTP members are named by the coordinator; Kafka's
 * consumers name themselves (KIP-1082); a KIP-848 consumer that stops says so (epoch -2), a classic one never does;
 * a KIP-848 consumer's session is the broker's to set, so the group's configs ({@link GroupConfigs}) apply to it.
 */
public enum JoinRules {
    /** HTTP: the coordinator chooses member ids. */
    COORDINATOR_IDS(false, false, false),
    /**
     * The client chooses its member id; a join takes an instance id only once its holder left for a while (epoch
     * -2) or expired, else {@code unreleased-instance} (Kafka's KIP-848 consumer protocol).
     */
    CLIENT_IDS(true, false, false),
    /**
     * As {@link #CLIENT_IDS}, and the group's configs override the session timeout the caller passes and set the
     * heartbeat interval (Kafka's consumer protocol, {@code consumer.session.timeout.ms} and
     * {@code consumer.heartbeat.interval.ms}).
     */
    CONSUMER_PROTOCOL(true, false, true),
    /** As {@link #CONSUMER_PROTOCOL}, with the streams protocol's keys ({@link GroupConfigs#STREAMS}). */
    STREAMS_PROTOCOL(true, false, true),
    /**
     * As {@link #CLIENT_IDS}, and a join takes an instance id from a live holder, which is fenced: a restarted classic
     * static member never said it stopped (KIP-345).
     */
    CLIENT_IDS_TAKE_OVER(true, true, false);

    private final boolean clientChosenIds;
    private final boolean takesOverLiveInstance;
    private final boolean groupSetsSession;

    JoinRules(boolean clientChosenIds, boolean takesOverLiveInstance, boolean groupSetsSession) {
        this.clientChosenIds = clientChosenIds;
        this.takesOverLiveInstance = takesOverLiveInstance;
        this.groupSetsSession = groupSetsSession;
    }

    boolean groupSetsSession() {
        return groupSetsSession;
    }

    /** The group configs that set the session of a member joining under these rules. */
    GroupConfigs.Keys configKeys() {
        return this == STREAMS_PROTOCOL ? GroupConfigs.STREAMS : GroupConfigs.CONSUMER;
    }

    boolean clientChosenIds() {
        return clientChosenIds;
    }

    boolean takesOverLiveInstance() {
        return takesOverLiveInstance;
    }
}
