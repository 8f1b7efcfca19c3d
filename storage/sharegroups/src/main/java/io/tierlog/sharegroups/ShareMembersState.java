package io.tierlog.sharegroups;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The members of one share group as stored in its members file (JSON, public fields bound by Jackson). Mutable and
 * not thread-safe: an instance lives only inside one locked read-modify-write of {@link ShareGroupMembers}.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
final class ShareMembersState {
    /** Grows whenever a member joins, leaves or expires, or a member's subscription or assignment changes. */
    public int groupEpoch;
    public TreeMap<String, Member> members = new TreeMap<>();
    /** The group's own session settings, {@code GroupConfigs.SHARE} keys: only those set (absent when none). */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public TreeMap<String, String> configs = new TreeMap<>();

    @JsonIgnoreProperties(ignoreUnknown = true)
    static final class Member {
        public String memberId;
        /** The group epoch at which this member's subscription or assignment last changed (or it joined). */
        public int memberEpoch;
        /** The epoch before {@link #memberEpoch}: a heartbeat still carrying it lost an answer, and is accepted. */
        public int previousMemberEpoch;
        public String clientId;
        public String rackId;
        public TreeSet<String> subscribedTopics = new TreeSet<>();
        /** The subscribed topics that existed at the last change, each assigned whole. */
        public TreeMap<String, AssignedTopic> assigned = new TreeMap<>();
        /** Wall-clock epoch ms of the receiving instance when the last heartbeat arrived. */
        public long lastHeartbeatMs;
        /** The instance that received the last heartbeat (its {@code SessionClock} id). */
        public String heardBy;
        /** That instance's monotonic ms when the last heartbeat arrived: meaningful to {@link #heardBy} only. */
        public long heardAtMonotonicMs;
        /** The session timeout the member was given: every instance expires it by the same one. */
        public long sessionTimeoutMs;
    }

    /**
     * A topic assigned to a member: all of its partitions, {@code 0..partitions-1}. The id tells a topic re-created
     * under the same name (and partition count) from the one assigned, so the member is told of the new one.
     */
    record AssignedTopic(UUID topicId, int partitions) {
    }
}
