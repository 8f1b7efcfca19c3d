package io.tierlog.groups;

/** The answers of {@link ClassicGroupCoordinator}, named as the Kafka error codes they are sent as. */
public enum ClassicError {
    NONE,
    /** KIP-394: the member is given its id and must join again with it. */
    MEMBER_ID_REQUIRED,
    UNKNOWN_MEMBER_ID,
    ILLEGAL_GENERATION,
    /** A round is open (or opened while the member waited): the member must join again. */
    REBALANCE_IN_PROGRESS,
    /** Another protocol type than the group's, or no protocol every member supports. */
    INCONSISTENT_GROUP_PROTOCOL,
    /** A static member's instance id was taken over by a newer process. */
    FENCED_INSTANCE_ID,
    INVALID_SESSION_TIMEOUT,
    GROUP_MAX_SIZE_REACHED,
    INVALID_REQUEST
}
