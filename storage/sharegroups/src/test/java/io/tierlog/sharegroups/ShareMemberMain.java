package io.tierlog.sharegroups;

import io.tierlog.log.topic.TopicStore;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * A service instance for {@link ShareGroupMembersCrashTest}: joins members {@code m0, m1, ...} to share group "g"
 * (topic "t") one after another, as fast as it can, and prints {@code <member> <epoch> ok} on stdout once each join
 * has answered, until it is killed. Args: data dir.
 */
public final class ShareMemberMain {
    public static void main(String[] args) {
        Path dir = Path.of(args[0]);
        ShareGroupMembers members = new ShareGroupMembers(dir, new TopicStore(dir, Clock.systemUTC())::find,
                Clock.systemUTC(), ShareGroupMembers.DEFAULT_SESSION_TIMEOUT,
                ShareGroupMembers.DEFAULT_HEARTBEAT_INTERVAL, Duration.ofSeconds(1));
        for (int i = 0; ; i++) {
            ShareGroupMembers.Answer a = members.heartbeat("g", "m" + i, 0, List.of("t"), "crash", null);
            System.out.println(a.memberId() + " " + a.memberEpoch() + " ok");
            System.out.flush();
        }
    }
}
