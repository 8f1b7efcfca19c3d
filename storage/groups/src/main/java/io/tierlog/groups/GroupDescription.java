package io.tierlog.groups;

import java.util.List;

/** A group as {@code GET /v1/groups/{group}} shows it. */
public record GroupDescription(String group, State state, long groupEpoch, List<MemberDescription> members) {
    public enum State {
        EMPTY, STABLE, RECONCILING;

        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public record MemberDescription(String memberId, String clientId, int memberEpoch,
                                    List<TopicPartitions> assignment, long lastHeartbeatMs) {
    }
}
