package io.tierlog.service.kafka;

import io.tierlog.sharegroups.Ack;
import io.tierlog.sharegroups.AckType;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Share sessions' epochs, slots, and Kafka's offset acknowledgements mapped onto the acquired runs' leases. */
class ShareSessionsTest {
    static final ShareSessions.Part P0 = new ShareSessions.Part(Uuid.randomUuid(), "jobs", 0);
    final ManualClock clock = new ManualClock();
    final ShareSessions sessions = new ShareSessions(2, Duration.ofMinutes(2), clock);
    final ShareSessions.Key member = new ShareSessions.Key("workers", "m1", "app");

    private ShareSessions.Session open(ShareSessions.Key key) {
        ShareSessions.Lookup l = sessions.open(key, new HashMap<>());
        assertThat(l.error()).isEqualTo(Errors.NONE);
        return l.session();
    }

    @Test
    void epochsFollowOneAnotherAndAClosedSessionIsGone() {
        open(member);
        assertThat(sessions.next(member, 2).error()).isEqualTo(Errors.INVALID_SHARE_SESSION_EPOCH);
        assertThat(sessions.next(member, 1).error()).isEqualTo(Errors.NONE);
        assertThat(sessions.next(member, 2).error()).isEqualTo(Errors.NONE);
        assertThat(sessions.close(member)).isNotNull();
        assertThat(sessions.next(member, 3).error()).isEqualTo(Errors.SHARE_SESSION_NOT_FOUND);
    }

    @Test
    void anotherCallerNamingTheSameMemberFindsNoSession() {
        open(member);
        ShareSessions.Key impostor = new ShareSessions.Key("workers", "m1", "someone-else");
        assertThat(sessions.next(impostor, 1).error()).isEqualTo(Errors.SHARE_SESSION_NOT_FOUND);
        assertThat(sessions.close(impostor)).isNull();
        assertThat(sessions.next(member, 1).error()).as("the owner's session is untouched").isEqualTo(Errors.NONE);
    }

    @Test
    void reopeningHandsBackWhatTheOldSessionHeld() {
        ShareSessions.Session s = open(member);
        s.add(P0);
        s.acquired(P0, new ShareSessions.Acquired(0, 9, 1, "L0"));
        Map<ShareSessions.Part, List<ShareSessions.Acquired>> released = new HashMap<>();
        sessions.open(member, released);
        assertThat(released).containsEntry(P0, List.of(new ShareSessions.Acquired(0, 9, 1, "L0")));
    }

    @Test
    void slotsAreBoundedAndAnIdleSessionGivesUpItsSlot() {
        open(member);
        open(new ShareSessions.Key("workers", "m2", "app"));
        assertThat(sessions.open(new ShareSessions.Key("workers", "m3", "app"), new HashMap<>()).error())
                .isEqualTo(Errors.SHARE_SESSION_LIMIT_REACHED);
        clock.advance(Duration.ofMinutes(2));
        assertThat(sessions.open(new ShareSessions.Key("workers", "m3", "app"), new HashMap<>()).error())
                .isEqualTo(Errors.NONE);
        assertThat(sessions.next(member, 1).error()).as("the least recently used went")
                .isEqualTo(Errors.SHARE_SESSION_NOT_FOUND);
    }

    @Test
    void acknowledgementsNarrowTheRunsLeasesAndTakeThemOut() {
        ShareSessions.Session s = open(member);
        s.acquired(P0, new ShareSessions.Acquired(0, 9, 1, "L0"));
        s.acquired(P0, new ShareSessions.Acquired(10, 14, 2, "L10"));
        // 3..12 typed per offset: accept 3..5, release 6, gap 7, reject 8..12 (crossing into the second run).
        List<Ack> acks = s.take(P0, List.<long[]>of(new long[]{3, 12}),
                List.of(List.of((byte) 1, (byte) 1, (byte) 1, (byte) 2, (byte) 0, (byte) 3, (byte) 3, (byte) 3,
                        (byte) 3, (byte) 3)));
        assertThat(acks).containsExactly(new Ack("L0", AckType.ACCEPT, 3L, 5L), new Ack("L0", AckType.RELEASE, 6L, 6L),
                new Ack("L0", AckType.ACCEPT, 7L, 7L), new Ack("L0", AckType.REJECT, 8L, 9L),
                new Ack("L10", AckType.REJECT, 10L, 12L));
        assertThat(s.take(P0, List.<long[]>of(new long[]{5, 5}), List.of(List.of((byte) 1))))
                .as("offset 5 is acknowledged already").isNull();
        assertThat(s.take(P0, List.<long[]>of(new long[]{0, 2}, new long[]{13, 14}),
                List.of(List.of((byte) 1), List.of((byte) 2))))
                .containsExactly(new Ack("L0", AckType.ACCEPT, 0L, 2L), new Ack("L10", AckType.RELEASE, 13L, 14L));
        assertThat(s.drain()).as("nothing left").containsEntry(P0, List.of());
    }

    @Test
    void anAcknowledgementOfAnythingNotAcquiredTakesNothing() {
        ShareSessions.Session s = open(member);
        s.acquired(P0, new ShareSessions.Acquired(0, 4, 1, "L0"));
        assertThat(s.take(P0, List.<long[]>of(new long[]{3, 6}), List.of(List.of((byte) 1)))).isNull();
        assertThat(s.take(P0, List.<long[]>of(new long[]{0, 1}), List.of(List.of((byte) 9)))).as("unknown type").isNull();
        assertThat(s.take(P0, List.<long[]>of(new long[]{0, 2}), List.of(List.of((byte) 1, (byte) 1))))
                .as("two types for three offsets").isNull();
        assertThat(s.drain().get(P0)).as("all still held").containsExactly(new ShareSessions.Acquired(0, 4, 1, "L0"));
    }
}
