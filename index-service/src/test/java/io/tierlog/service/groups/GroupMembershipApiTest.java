package io.tierlog.service.groups;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.tierlog.service.ManualServiceClock;
import io.tierlog.service.ops.LogGauges;
import io.tierlog.testkit.ManualClock;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;

/** Consumer groups that share work (api.md), over a real socket: members split a topic, join, leave, expire, fence. */
@QuarkusTest
@TestProfile(ManualServiceClock.Profile.class)
class GroupMembershipApiTest {
    @Inject
    LogGauges gauges;
    /** The service's clock: sessions expire when a test moves it (ManualServiceClock), never by waiting. */
    @Inject
    ManualClock clock;

    /** A consumer as the protocol asks: it owns what its last answer gave it. */
    static final class Member {
        final String group;
        final String topic;
        final long sessionTimeoutMs;
        String id;
        int epoch;
        Set<Integer> owns = new TreeSet<>();

        Member(String group, String topic, long sessionTimeoutMs) {
            this.group = group;
            this.topic = topic;
            this.sessionTimeoutMs = sessionTimeoutMs;
        }

        Member beat() {
            JsonPath a = heartbeatRaw().then().statusCode(200).extract().jsonPath();
            id = a.getString("memberId");
            epoch = a.getInt("memberEpoch");
            owns = new TreeSet<>();
            List<Integer> ps = a.getList("assignment.find { it.topic == '" + topic + "' }.partitions", Integer.class);
            if (ps != null) {
                owns.addAll(ps);
            }
            assertThat(a.getLong("heartbeatIntervalMs")).isPositive();
            return this;
        }

        Response heartbeatRaw() {
            return given().contentType("application/json").body(body(epoch)).post("/v1/groups/" + group + "/heartbeat");
        }

        String body(int withEpoch) {
            return "{\"memberId\":" + (id == null ? "null" : "\"" + id + "\"") + ",\"memberEpoch\":" + withEpoch
                    + ",\"topics\":[\"" + topic + "\"],\"sessionTimeoutMs\":" + sessionTimeoutMs
                    + ",\"ownedPartitions\":[{\"topic\":\"" + topic + "\",\"partitions\":" + owns + "}],\"clientId\":\"t\"}";
        }

        void leave() {
            given().contentType("application/json").body("{\"memberId\":\"" + id + "\",\"memberEpoch\":-1}")
                    .post("/v1/groups/" + group + "/heartbeat").then().statusCode(200)
                    .body("memberEpoch", equalTo(-1)).body("assignment.size()", equalTo(0));
        }
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static void createTopic(String name, int partitions) {
        given().body("{\"name\":\"" + name + "\",\"partitions\":" + partitions + "}").post("/v1/topics").then().statusCode(201);
    }

    static void expectProblem(Response r, int status, String type) {
        r.then().statusCode(status).contentType("application/problem+json").body("type", equalTo(type))
                .body("status", equalTo(status)).body("detail", not(equalTo(null)));
    }

    /** Heartbeats every member in turn until the group is stable and returns; fails if it never is. */
    static void settle(String group, Member... members) {
        for (int round = 0; round < 10; round++) {
            for (Member m : members) {
                m.beat();
            }
            if ("stable".equals(given().get("/v1/groups/" + group).then().statusCode(200).extract().path("state"))) {
                for (Member m : members) {
                    m.beat();
                }
                return;
            }
        }
        throw new AssertionError("group " + group + " did not become stable");
    }

    static void assertSplit(int partitions, Member... members) {
        Set<Integer> all = new HashSet<>();
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (Member m : members) {
            for (int p : m.owns) {
                assertThat(all.add(p)).as("partition %d has two owners", p).isTrue();
            }
            min = Math.min(min, m.owns.size());
            max = Math.max(max, m.owns.size());
        }
        assertThat(all).hasSize(partitions);
        assertThat(max - min).isLessThanOrEqualTo(1);
    }

    @Test
    void twoMembersSplitATopicAThirdJoinsAndOneLeaves() {
        String topic = unique("shared");
        String group = unique("workers");
        createTopic(topic, 6);
        Member a = new Member(group, topic, 30_000).beat();
        assertThat(a.owns).containsExactly(0, 1, 2, 3, 4, 5);
        Member b = new Member(group, topic, 30_000).beat();
        assertThat(b.owns).as("nothing is free yet").isEmpty();
        settle(group, a, b);
        assertSplit(6, a, b);
        assertThat(a.owns).hasSize(3);

        Set<Integer> aBefore = Set.copyOf(a.owns);
        Set<Integer> bBefore = Set.copyOf(b.owns);
        Member c = new Member(group, topic, 30_000).beat();
        settle(group, a, b, c);
        assertSplit(6, a, b, c);
        assertThat(aBefore).as("sticky: a only lost partitions").containsAll(a.owns);
        assertThat(bBefore).containsAll(b.owns);

        JsonPath d = given().get("/v1/groups/" + group).then().statusCode(200).extract().jsonPath();
        assertThat(d.getString("state")).isEqualTo("stable");
        assertThat(d.getList("members")).hasSize(3);
        assertThat(d.getLong("members[0].lastHeartbeatMs")).isPositive();
        assertThat(d.getLong("groupEpoch")).isPositive();

        c.leave();
        expectProblem(c.heartbeatRaw(), 404, "unknown-member");
        a.beat();
        b.beat();
        assertSplit(6, a, b);
    }

    @Test
    void aGroupWithMembersButNoCommitsIsListed() {
        String topic = unique("listed");
        String group = unique("fresh");
        createTopic(topic, 2);
        Member a = new Member(group, topic, 30_000).beat();
        JsonPath listed = given().get("/v1/groups").then().statusCode(200).extract().jsonPath();
        assertThat(listed.getList("groups.group", String.class)).as("a member joined, nothing committed").contains(group);
        assertThat(listed.getLong("groups.find { it.group == '" + group + "' }.totalLag")).isZero();

        a.leave();
        assertThat(given().get("/v1/groups").then().statusCode(200).extract().jsonPath()
                .getList("groups.group", String.class)).as("no members and no offsets").doesNotContain(group);
    }

    @Test
    void anExpiredMembersPartitionsMoveToTheOthers() {
        String topic = unique("expiry");
        String group = unique("workers");
        createTopic(topic, 4);
        Member a = new Member(group, topic, 5_000).beat();
        Member b = new Member(group, topic, 10_000).beat();
        settle(group, a, b);
        assertSplit(4, a, b);
        // a heartbeats a last time, then stops; b goes on. This instance heard a last, so no clock-skew margin: a
        // expires once the service's clock passes its last heartbeat + its session of 5 s, and not a millisecond
        // before (another instance would add tierlog.groups.max-clock-skew: GroupCoordinatorTest).
        a.beat();
        clock.advanceMillis(5_000);
        for (int i = 0; i < 3; i++) {
            b.beat();
        }
        assertThat(b.owns).as("a's session has not yet run out").hasSize(2);
        clock.advanceMillis(1);
        for (int i = 0; i < 10 && b.owns.size() < 4; i++) {
            b.beat();
        }
        assertThat(b.owns).containsExactly(0, 1, 2, 3);
        expectProblem(a.heartbeatRaw(), 404, "unknown-member");
    }

    @Test
    void commitsAreFencedWhileTheGroupHasMembers() {
        String topic = unique("fenced");
        String group = unique("workers");
        createTopic(topic, 2);
        given().contentType("application/json").body("{\"records\":[{\"partition\":0,\"value\":1},{\"partition\":1,\"value\":2}]}")
                .post("/v1/topics/" + topic + "/records").then().statusCode(200);
        Member a = new Member(group, topic, 30_000).beat();
        Member b = new Member(group, topic, 30_000).beat();
        settle(group, a, b);
        int aPart = a.owns.iterator().next();
        int bPart = b.owns.iterator().next();
        String path = "/v1/groups/" + group + "/offsets";
        expectProblem(given().contentType("application/json")
                .body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":" + aPart + ",\"offset\":1}]}").put(path),
                409, "fenced-member");
        expectProblem(given().contentType("application/json").body("{\"memberId\":\"" + a.id + "\",\"memberEpoch\":"
                + (a.epoch + 1) + ",\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":" + aPart + ",\"offset\":1}]}")
                .put(path), 409, "fenced-member");
        expectProblem(given().contentType("application/json").body("{\"memberId\":\"" + a.id + "\",\"memberEpoch\":"
                + a.epoch + ",\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":" + bPart + ",\"offset\":1}]}")
                .put(path), 409, "fenced-member");
        given().get(path).then().statusCode(200).body("offsets.size()", equalTo(0));
        given().contentType("application/json").body("{\"memberId\":\"" + a.id + "\",\"memberEpoch\":" + a.epoch
                + ",\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":" + aPart + ",\"offset\":1}]}")
                .put(path).then().statusCode(204);
        given().get(path).then().statusCode(200).body("offsets[0].offset", equalTo(1));

        // Delete and reset need an empty group.
        expectProblem(given().delete("/v1/groups/" + group), 409, "group-not-empty");
        expectProblem(given().contentType("application/json").body("{\"topics\":[\"" + topic + "\"],\"to\":\"earliest\"}")
                .post("/v1/groups/" + group + "/offsets/reset"), 409, "group-not-empty");
        a.leave();
        b.leave();
        given().get("/v1/groups/" + group).then().statusCode(200).body("state", equalTo("empty"))
                .body("members.size()", equalTo(0));
        given().contentType("application/json").body("{\"topics\":[\"" + topic + "\"],\"to\":\"latest\"}")
                .post("/v1/groups/" + group + "/offsets/reset").then().statusCode(200)
                .body("offsets.size()", equalTo(2)).body("offsets[0].offset", equalTo(1)).body("offsets[1].offset", equalTo(1));
        given().contentType("application/json").body("{\"topics\":[\"" + topic + "\"],\"to\":\"earliest\"}")
                .post("/v1/groups/" + group + "/offsets/reset").then().statusCode(200).body("offsets[0].offset", equalTo(0));
        given().delete("/v1/groups/" + group).then().statusCode(204);
        given().get(path).then().statusCode(200).body("offsets.size()", equalTo(0));
        expectProblem(given().delete("/v1/groups/" + group), 404, "unknown-group");
        expectProblem(given().get("/v1/groups/" + group), 404, "unknown-group");
    }

    @Test
    void lagMsIsTheAgeOfTheFirstUnconsumedRecord() {
        String topic = unique("lagms");
        String group = unique("slow");
        createTopic(topic, 1);
        long before = System.currentTimeMillis();
        given().contentType("application/json").body("{\"records\":[{\"partition\":0,\"value\":1},{\"partition\":0,\"value\":2}]}")
                .post("/v1/topics/" + topic + "/records").then().statusCode(200);
        String path = "/v1/groups/" + group + "/offsets";
        given().contentType("application/json").body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":0}]}")
                .put(path).then().statusCode(204);
        JsonPath lag = given().get("/v1/groups/" + group + "/lag").then().statusCode(200).extract().jsonPath();
        long lagMs = lag.getLong("partitions[0].lagMs");
        assertThat(lagMs).isBetween(0L, System.currentTimeMillis() - before + 1);
        assertThat(lag.getLong("partitions[0].lag")).isEqualTo(2);
        gauges.refresh();
        assertThat(given().get("/q/metrics").then().statusCode(200).extract().asString())
                .containsPattern("tierlog_group_lag_seconds\\{group=\"" + group + "\",partition=\"0\",topic=\"" + topic
                        + "\"} [0-9.E-]+");
        given().contentType("application/json").body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":2}]}")
                .put(path).then().statusCode(204);
        given().get("/v1/groups/" + group + "/lag").then().statusCode(200).body("partitions[0].lagMs", equalTo(0));
    }

    @Test
    void badHeartbeatsAre400NamingTheField() {
        String group = unique("bad");
        String path = "/v1/groups/" + group + "/heartbeat";
        expectProblem(given().contentType("application/json").body("{\"memberId\":null,\"topics\":[\"t\"]}").post(path),
                400, "bad-request");
        given().contentType("application/json").body("{\"memberId\":null,\"memberEpoch\":0,\"topics\":[\"t\"],\"sessionTimeoutMs\":1}")
                .post(path).then().statusCode(400).body("field", equalTo("sessionTimeoutMs"));
        given().contentType("application/json").body("{\"memberId\":null,\"memberEpoch\":0,\"topics\":\"t\"}")
                .post(path).then().statusCode(400).body("field", equalTo("topics"));
        given().contentType("application/json").body("{\"memberEpoch\":0,\"topics\":[\"t\"],\"ownedPartitions\":[{\"topic\":\"t\",\"partitions\":[-1]}]}")
                .post(path).then().statusCode(400).body("field", equalTo("ownedPartitions[0].partitions[0]"));
        expectProblem(given().contentType("application/json").body("{\"memberEpoch\":0,\"topics\":[\"__consumer_offsets\"]}")
                .post(path), 400, "invalid-topic");
        expectProblem(given().contentType("application/json").body("{\"memberId\":\"nobody\",\"memberEpoch\":4,\"topics\":[\"t\"]}")
                .post(path), 404, "unknown-member");
        expectProblem(given().contentType("application/json").body("{\"memberEpoch\":0,\"topics\":[\"t\"]}")
                .post("/v1/groups/a%20b/heartbeat"), 400, "invalid-group");
        expectProblem(given().get("/v1/groups/" + group), 404, "unknown-group");
    }
}
