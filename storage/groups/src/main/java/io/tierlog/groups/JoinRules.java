package io.tierlog.groups;

/**
 * Who names a joining member, and when a join may take a static member's instance id from the member holding it.
 * The protocols differ here (ADR 0047): HTTP members are named by the coordinator; Kafka's consumers name themselves
 * (KIP-1082); a KIP-848 consumer that stops says so (epoch -2), a classic one never does.
 */
public enum JoinRules {
    /** HTTP: the coordinator chooses member ids. */
    COORDINATOR_IDS(false, false),
    /**
     * The client chooses its member id; a join takes an instance id only once its holder left for a while (epoch
     * -2) or expired, else {@code unreleased-instance} (Kafka's KIP-848 consumer protocol).
     */
    CLIENT_IDS(true, false),
    /**
     * As {@link #CLIENT_IDS}, and a join takes an instance id from a live holder, which is fenced: a restarted classic
     * static member never said it stopped (KIP-345).
     */
    CLIENT_IDS_TAKE_OVER(true, true);

    private final boolean clientChosenIds;
    private final boolean takesOverLiveInstance;

    JoinRules(boolean clientChosenIds, boolean takesOverLiveInstance) {
        this.clientChosenIds = clientChosenIds;
        this.takesOverLiveInstance = takesOverLiveInstance;
    }

    boolean clientChosenIds() {
        return clientChosenIds;
    }

    boolean takesOverLiveInstance() {
        return takesOverLiveInstance;
    }
}
