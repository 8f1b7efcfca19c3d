package io.tierlog.service.kafka;

import io.tierlog.groups.ClassicError;
import io.tierlog.groups.ClassicGroupCoordinator;
import io.tierlog.groups.ClassicGroupCoordinator.Join;
import io.tierlog.groups.ClassicGroupCoordinator.JoinAnswer;
import io.tierlog.groups.ClassicGroupCoordinator.SyncAnswer;
import io.tierlog.groups.GroupAssignor;
import io.tierlog.service.ServiceThreads;
import jakarta.inject.Singleton;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.SyncGroupResponse;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Kafka's classic group APIs for groups whose members assign among themselves ({@link ClassicGroupCoordinator}):
 * a JoinGroup whose protocol type is not {@code consumer} (Kafka Connect's {@code connect}), or whose assignors are
 * none the service runs itself (Kafka Streams' {@code stream}, any custom assignor), or into a group that is classic
 * already. Every other classic request is the service's to assign ({@link KafkaGroups}), as is a consumer's join
 * into a group the service assigns already, whatever its assignor (as Kafka serves a classic member of a consumer
 * group; the coordinator answers it {@link JoinAnswer#served}). Heartbeat,
 * SyncGroup and LeaveGroup are routed by the member id: the rounds hand out ids of their own
 * ({@link ClassicGroupCoordinator#handsOut}), so a service-assigned member's request reads no classic state.
 *
 * <p>Waiting: a JoinGroup waits for its round to close and a follower's SyncGroup for the leader's, without holding a
 * thread. A waiting request asks the coordinator again when a request of the same group on this instance changed
 * its state, and every {@link #POLL_MS} for changes made by other instances and for deadlines.
 */
@Singleton
public class KafkaClassicGroups {
    /** The classic consumers' assignors the service runs itself for them ({@link #serverAssignor}). */
    static final Set<String> SERVED_ASSIGNORS = Set.of("range", "roundrobin", "sticky", "cooperative-sticky");

    /**
     * The service's assignor for a classic consumer's protocol: {@code range} for Kafka's RangeAssignor, whose users
     * may rely on co-partitioned topics going together; {@code uniform} (balanced and sticky) for the others.
     */
    static String serverAssignor(String protocol) {
        return (protocol.equals("range") ? GroupAssignor.RANGE : GroupAssignor.UNIFORM).wireName();
    }

    /** How often a waiting join or sync looks for changes this instance did not make. */
    static final long POLL_MS = 100;

    private final ClassicGroupCoordinator coordinator;
    private final ClassicWaits waits;

    public KafkaClassicGroups(ClassicGroupCoordinator coordinator, ServiceThreads threads) {
        this.coordinator = coordinator;
        this.waits = new ClassicWaits(threads.timers(), POLL_MS);
    }

    /**
     * A JoinGroup: ours (see the class comment), or {@code coordinatorAssigned}'s.
     *
     * @param workers where blocking calls run
     */
    CompletableFuture<AbstractResponse> joinGroup(JoinGroupRequest request, short version, String clientId,
                                                  String clientHost, Executor workers,
                                                  Supplier<AbstractResponse> coordinatorAssigned) {
        JoinGroupRequestData in = request.data();
        return CompletableFuture.supplyAsync(() -> {
            if (!ours(in)) {
                return new Routed(coordinatorAssigned.get(), null);
            }
            List<ClassicGroupCoordinator.Protocol> protocols = new ArrayList<>();
            in.protocols().forEach(p -> protocols.add(new ClassicGroupCoordinator.Protocol(p.name(), p.metadata())));
            // JoinGroup v0 has no rebalance timeout: Kafka takes the session timeout for it.
            int rebalanceTimeout = version == 0 ? in.sessionTimeoutMs() : in.rebalanceTimeoutMs();
            JoinAnswer answer = coordinator.join(in.groupId(), new Join(emptyToNull(in.memberId()),
                    emptyToNull(in.groupInstanceId()), clientId, clientHost, in.protocolType(), protocols,
                    in.sessionTimeoutMs(), rebalanceTimeout, version >= 4));
            if (answer.served()) {
                return new Routed(coordinatorAssigned.get(), null);
            }
            waits.poke(in.groupId());
            return new Routed(null, answer);
        }, workers).thenCompose(routed -> {
            if (routed.response != null) {
                return CompletableFuture.completedFuture(routed.response);
            }
            JoinAnswer first = routed.join;
            CompletableFuture<JoinAnswer> answered = !first.pending() ? CompletableFuture.completedFuture(first)
                    : waits.await(in.groupId(), workers, () -> {
                        JoinAnswer a = coordinator.awaitJoin(in.groupId(), first.memberId(), first.generation());
                        return a.pending() ? null : a;
                    });
            return answered.thenApply(a -> joinResponse(a, version));
        });
    }

    private record Routed(AbstractResponse response, JoinAnswer join) {
    }

    /** Whether the join is for the classic rounds: see the class comment. */
    private boolean ours(JoinGroupRequestData in) {
        if (!KafkaInternals.CONSUMER_PROTOCOL_TYPE.equals(in.protocolType())) {
            return true;
        }
        boolean served = false;
        for (JoinGroupRequestData.JoinGroupRequestProtocol p : in.protocols()) {
            served |= SERVED_ASSIGNORS.contains(p.name());
        }
        return !served || coordinator.active(in.groupId());
    }

    private static JoinGroupResponse joinResponse(JoinAnswer a, short version) {
        JoinGroupResponseData out = new JoinGroupResponseData().setErrorCode(error(a.error()).code())
                .setMemberId(a.memberId() == null ? "" : a.memberId()).setGenerationId(a.generation())
                .setLeader(a.leader() == null ? "" : a.leader());
        if (a.error() == ClassicError.NONE) {
            out.setProtocolName(a.protocolName());
            if (version >= 7) {
                out.setProtocolType(a.protocolType());
            }
            for (ClassicGroupCoordinator.Joined m : a.members()) {
                out.members().add(new JoinGroupResponseData.JoinGroupResponseMember().setMemberId(m.memberId())
                        .setGroupInstanceId(m.instanceId()).setMetadata(m.metadata()));
            }
        } else {
            out.setProtocolName(version >= 7 ? null : "");
        }
        return new JoinGroupResponse(out, version);
    }

    /** A SyncGroup: a classic-rounds member's ({@link ClassicGroupCoordinator#handsOut}), else the service's. */
    CompletableFuture<AbstractResponse> syncGroup(SyncGroupRequest request, Executor workers,
                                                  Supplier<AbstractResponse> coordinatorAssigned) {
        SyncGroupRequestData in = request.data();
        if (!ClassicGroupCoordinator.handsOut(in.memberId())) {
            return CompletableFuture.supplyAsync(coordinatorAssigned, workers);
        }
        return CompletableFuture.supplyAsync(() -> {
            Map<String, byte[]> assignments = new HashMap<>();
            in.assignments().forEach(a -> assignments.put(a.memberId(), a.assignment()));
            SyncAnswer answer = coordinator.sync(in.groupId(), in.memberId(), emptyToNull(in.groupInstanceId()),
                    in.generationId(), emptyToNull(in.protocolType()), emptyToNull(in.protocolName()), assignments);
            waits.poke(in.groupId());
            return answer;
        }, workers).thenCompose(first -> {
            CompletableFuture<SyncAnswer> answered = !first.pending() ? CompletableFuture.completedFuture(first)
                    : waits.await(in.groupId(), workers, () -> {
                        SyncAnswer a = coordinator.awaitSync(in.groupId(), in.memberId(), in.generationId());
                        return a.pending() ? null : a;
                    });
            return answered.thenApply(a -> new SyncGroupResponse(new SyncGroupResponseData()
                    .setErrorCode(error(a.error()).code()).setProtocolType(a.protocolType())
                    .setProtocolName(a.protocolName()).setAssignment(a.assignment())));
        });
    }

    /** A Heartbeat of a classic-rounds member, or null for a member the service assigns. */
    HeartbeatResponse heartbeat(HeartbeatRequest request) {
        if (!ClassicGroupCoordinator.handsOut(request.data().memberId())) {
            return null;
        }
        ClassicError e = coordinator.heartbeat(request.data().groupId(), request.data().memberId(),
                emptyToNull(request.data().groupInstanceId()), request.data().generationId());
        waits.poke(request.data().groupId());
        return new HeartbeatResponse(new HeartbeatResponseData().setErrorCode(error(e).code()));
    }

    /**
     * A LeaveGroup of a classic group's members, or null if the group is not classic. Members named by an id the
     * service assigned go straight to it; one named by its instance id alone (Admin's removal) is looked up.
     */
    LeaveGroupResponse leaveGroup(LeaveGroupRequest request) {
        List<LeaveGroupRequestData.MemberIdentity> members = request.members();
        if (!members.isEmpty() && emptyToNull(members.get(0).memberId()) != null
                && !ClassicGroupCoordinator.handsOut(members.get(0).memberId())) {
            return null;
        }
        LeaveGroupResponseData out = new LeaveGroupResponseData();
        for (LeaveGroupRequestData.MemberIdentity member : members) {
            ClassicError e = coordinator.leave(request.data().groupId(), emptyToNull(member.memberId()),
                    emptyToNull(member.groupInstanceId()));
            if (e == null) {
                return null;
            }
            out.members().add(new LeaveGroupResponseData.MemberResponse().setMemberId(member.memberId())
                    .setGroupInstanceId(member.groupInstanceId()).setErrorCode(error(e).code()));
        }
        waits.poke(request.data().groupId());
        return KafkaGroups.leaveGroupAnswer(out, request.version());
    }

    static Errors error(ClassicError e) {
        return Errors.valueOf(e.name());
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }
}
