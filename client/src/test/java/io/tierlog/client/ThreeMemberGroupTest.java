package io.tierlog.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static io.tierlog.client.GroupConsumerTest.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three consumers of one group on a 6-partition topic, over HTTP against the real service: two partitions each;
 * when one leaves (closed) or stops heartbeating abruptly (its requests refused by a {@link FaultProxy}), the other
 * two take its partitions over and resume each at the group's committed offset, every record is consumed, and the
 * departing member's revocation (or loss) callback ran before another member was assigned the partition.
 */
@Tag("slow")
class ThreeMemberGroupTest {
    private static final int PARTITIONS = 6;

    /** One ownership of a partition: when assigned, when revoked, and where the owner's reading started. */
    record Ownership(String consumer, TopicPartition tp, long from, long to) {
    }

    /** A group member on its own thread; records ownership, the committed offset at assignment, first offsets read. */
    static final class Member extends Thread implements RebalanceListener {
        final String name;
        final TierlogClient admin;
        final String group;
        final Consumer consumer;
        final List<Ownership> history;
        final Set<String> read;
        final Map<TopicPartition, Long> since = new ConcurrentHashMap<>();
        /** Per partition assigned: the group's committed offset when it was assigned (-1: none). */
        final Map<TopicPartition, Long> committedAtAssignment = new ConcurrentHashMap<>();
        /** Per partition assigned: the offset of the first record read after the assignment. */
        final Map<TopicPartition, Long> firstRead = new ConcurrentHashMap<>();
        /** Per partition revoked: the position when the revocation callback ran. */
        final Map<TopicPartition, Long> positionAtRevocation = new ConcurrentHashMap<>();
        volatile boolean running = true;
        volatile Throwable failure;

        Member(String name, TierlogClient client, TierlogClient admin, String group, String topic,
               List<Ownership> history, Set<String> read) {
            super("member-" + name);
            this.name = name;
            this.admin = admin;
            this.group = group;
            this.history = history;
            this.read = read;
            this.consumer = client.consumer(ConsumerConfig.group(group).withClientId(name)
                    .withSessionTimeout(Duration.ofSeconds(2)).withAutoCommitInterval(Duration.ofMillis(200))
                    .withFetchMaxWait(Duration.ofMillis(500)));
            consumer.subscribe(List.of(topic), this);
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (running) {
                    for (ConsumerRecord r : consumer.poll(Duration.ofMillis(200))) {
                        firstRead.putIfAbsent(new TopicPartition(r.topic(), r.partition()), r.offset());
                        read.add(r.valueAsString());
                    }
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            long now = System.nanoTime();
            // The consumer looks its start up after this callback, and no other member owns these partitions now.
            Map<TopicPartition, Long> committed = admin.admin().groupOffsets(group);
            for (TopicPartition tp : partitions) {
                since.put(tp, now);
                firstRead.remove(tp);
                committedAtAssignment.put(tp, committed.getOrDefault(tp, -1L));
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            long now = System.nanoTime();
            for (TopicPartition tp : partitions) {
                Long position = consumer.position(tp);
                if (position != null) {
                    positionAtRevocation.put(tp, position);
                }
                history.add(new Ownership(name, tp, since.remove(tp), now));
            }
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            long now = System.nanoTime(); // lost partitions have no position any more
            partitions.forEach(tp -> history.add(new Ownership(name, tp, since.remove(tp), now)));
        }

        Set<TopicPartition> owned() {
            return Set.copyOf(since.keySet());
        }

        void stopPolling() throws InterruptedException {
            running = false;
            join(30_000);
            assertThat(failure).as("member %s's poll loop", name).isNull();
        }
    }

    @Test
    void aClosedMembersPartitionsAreTakenOverAtItsCommittedOffsets() throws Exception {
        run(false);
    }

    @Test
    void aMemberThatStopsHeartbeatingAbruptlyIsReplacedAtTheCommittedOffsets() throws Exception {
        run(true);
    }

    private void run(boolean abrupt) throws Exception {
        TestService service = TestService.shared();
        TierlogClient admin = service.adminClient();
        String topic = TestService.uniqueName("three");
        String group = TestService.uniqueName("three-members");
        admin.admin().createTopic(topic, PARTITIONS, null);
        produce(admin, topic, 0, 600);
        List<Ownership> history = new CopyOnWriteArrayList<>();
        Set<String> read = ConcurrentHashMap.newKeySet();
        try (FaultProxy proxy = new FaultProxy(service.url())) {
            TierlogClient viaProxy = TierlogClient.builder().url(proxy.url()).token(TestService.ADMIN_TOKEN)
                    .maxRetries(0).build();
            Member a = new Member("a", admin, admin, group, topic, history, read);
            Member b = new Member("b", admin, admin, group, topic, history, read);
            Member c = new Member("c", viaProxy, admin, group, topic, history, read);
            List<Member> all = List.of(a, b, c);
            all.forEach(Thread::start);
            await(() -> alive(all) && all.stream().allMatch(m -> m.owned().size() == 2), "two partitions each");
            await(() -> alive(all) && read.size() == 600, "the first 600 records read");
            long cut = System.nanoTime();
            if (abrupt) {
                // From now on none of c's requests reaches the service: no heartbeat, no commit, no fetch.
                proxy.refuseNext("/v1/", Integer.MAX_VALUE, 503, "service-stopping", 0);
                await(() -> alive(all) && c.owned().isEmpty(), "c notices the end of its session");
            } else {
                c.stopPolling();
                c.consumer.close();
            }
            await(() -> alive(all) && a.owned().size() == 3 && b.owned().size() == 3, "a and b take over c's share");
            // What c owned when it left: its ownerships that ended after the cut (a rebalance may have moved some
            // partitions between the members after each had two).
            Set<TopicPartition> cHad = new java.util.TreeSet<>();
            history.stream().filter(o -> o.consumer().equals("c") && o.to() >= cut).forEach(o -> cHad.add(o.tp()));
            assertThat(cHad).as("c's partitions when it left").isNotEmpty();
            produce(admin, topic, 600, 300);
            await(() -> alive(all) && read.size() == 900, "all 900 records read");
            Map<TopicPartition, Long> resumedAt = new java.util.HashMap<>();
            for (Member m : List.of(a, b)) {
                for (TopicPartition tp : m.owned()) {
                    if (cHad.contains(tp)) {
                        long committed = m.committedAtAssignment.get(tp);
                        long expected = committed < 0 ? 0 : committed; // nothing committed: from the start
                        assertThat(m.firstRead.get(tp)).as("%s resumes %s at the committed offset", m.name, tp)
                                .isEqualTo(expected);
                        resumedAt.put(tp, expected);
                    }
                }
            }
            assertThat(new java.util.TreeSet<>(resumedAt.keySet())).as("c's partitions, taken over").isEqualTo(cHad);
            if (!abrupt) {
                for (TopicPartition tp : cHad) {
                    assertThat(resumedAt.get(tp)).as("%s: a closed member commits its position, nothing is read twice",
                            tp).isEqualTo(c.positionAtRevocation.get(tp)).isGreaterThan(0L);
                }
            }
            a.stopPolling();
            b.stopPolling();
            if (abrupt) {
                c.stopPolling();
            }
            a.consumer.close();
            b.consumer.close();
            if (abrupt) {
                c.consumer.close();
            }
        }
        for (int i = 0; i < 900; i++) {
            assertThat(read).as("every record consumed").contains("v" + i);
        }
        assertThat(history).as("c's revocation (or loss) callback ran").anyMatch(o -> o.consumer().equals("c"));
        // By the members' own clocks: a partition went to its next owner only after the last one's callback ran.
        for (Ownership x : history) {
            for (Ownership y : history) {
                if (x != y && x.tp().equals(y.tp()) && !x.consumer().equals(y.consumer())) {
                    assertThat(x.to() <= y.from() || y.to() <= x.from()).as("%s and %s overlap", x, y).isTrue();
                }
            }
        }
    }

    private static boolean alive(List<Member> members) {
        for (Member m : members) {
            if (m.failure != null) {
                throw new AssertionError("member " + m.name + " failed", m.failure);
            }
        }
        return true;
    }

    private static void produce(TierlogClient client, String topic, int from, int n) {
        try (Producer p = client.producer(ProducerConfig.defaults())) {
            for (int i = from; i < from + n; i++) {
                p.send(ProducerRecord.of(topic, "k" + i, "v" + i));
            }
            p.flush();
        }
    }
}
