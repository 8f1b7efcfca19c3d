package io.tierlog.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two consumers of one group split a topic's partitions through the service's heartbeats; when one is cut off from
 * the service (its heartbeats refused by a {@link FaultProxy}), it stops consuming within its session and the other
 * takes its partitions over from the committed offsets. From the consumers' own callbacks: no partition ever had
 * two owners, and every record was consumed.
 */
@Tag("slow")
class GroupConsumerTest {
    record Ownership(String consumer, TopicPartition tp, long from, long to) {
    }

    /** A consumer on its own thread, recording what it owns when, and what it read. */
    static final class Worker extends Thread implements RebalanceListener {
        final String name;
        final Consumer consumer;
        final Map<TopicPartition, Long> since = new ConcurrentHashMap<>();
        final List<Ownership> history;
        final Set<String> read;
        volatile boolean running = true;
        volatile Throwable failure;

        Worker(String name, TierlogClient client, String group, String topic, List<Ownership> history, Set<String> read) {
            this.name = name;
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
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(r.valueAsString()));
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            long now = System.nanoTime();
            partitions.forEach(tp -> since.put(tp, now));
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            long now = System.nanoTime();
            partitions.forEach(tp -> history.add(new Ownership(name, tp, since.remove(tp), now)));
        }

        Set<TopicPartition> owned() {
            return Set.copyOf(since.keySet());
        }
    }

    @Test
    void twoConsumersSplitThePartitionsAndTheSurvivorTakesOverACutOffOnesShare() throws Exception {
        TestService service = TestService.shared();
        TierlogClient client = service.adminClient();
        String topic = TestService.uniqueName("group");
        String group = TestService.uniqueName("workers");
        client.admin().createTopic(topic, 4, null);
        produce(client, topic, 0, 400);

        List<Ownership> history = new CopyOnWriteArrayList<>();
        Set<String> read = ConcurrentHashMap.newKeySet();
        try (FaultProxy proxy = new FaultProxy(service.url())) {
            TierlogClient cutOffLater = TierlogClient.builder().url(proxy.url()).token(TestService.ADMIN_TOKEN)
                    .maxRetries(0).build();
            Worker a = new Worker("a", client, group, topic, history, read);
            Worker b = new Worker("b", cutOffLater, group, topic, history, read);
            a.start();
            b.start();
            await(() -> a.owned().size() == 2 && b.owned().size() == 2, "two partitions each");
            await(() -> read.size() == 400, "the first 400 records read");

            // b's heartbeats and commits are refused from now on: it must stop within its session.
            proxy.refuseNext("/v1/groups/", Integer.MAX_VALUE, 503, "service-stopping", 0);
            await(() -> alive(a, b) && b.owned().isEmpty(), "b gives up its partitions");
            await(() -> alive(a, b) && a.owned().size() == 4, "a takes over all four");
            produce(client, topic, 400, 200);
            await(() -> read.size() == 600, "all 600 records read");
            a.running = false;
            b.running = false;
            a.join(10_000);
            b.join(10_000);
            assertThat(a.failure).isNull();
            assertThat(b.failure).isNull();
            a.consumer.close(); // commits a's positions and leaves
            b.consumer.close();
            long end = System.nanoTime();
            a.owned().forEach(tp -> history.add(new Ownership("a", tp, a.since.get(tp), end)));
        }
        // Never two owners at once, by the consumers' own clocks.
        for (Ownership x : history) {
            for (Ownership y : history) {
                if (x != y && x.tp().equals(y.tp()) && !x.consumer().equals(y.consumer())) {
                    assertThat(x.to() <= y.from() || y.to() <= x.from()).as("%s and %s overlap", x, y).isTrue();
                }
            }
        }
        assertThat(history).anyMatch(o -> o.consumer().equals("b"));
        Admin.GroupLag lag = client.admin().groupLag(group);
        assertThat(lag.totalLag()).as("a committed everything on close").isZero();
        assertThat(lag.partitions()).hasSize(4);
    }

    /** Fails at once, with the cause, if a worker's poll loop died. */
    private static boolean alive(Worker... workers) {
        for (Worker w : workers) {
            if (w.failure != null) {
                throw new AssertionError("worker " + w.name + " failed", w.failure);
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

    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("in time: " + what).isLessThan(deadline);
            Thread.sleep(20); // polling the workers' state; they offer nothing to wait on
        }
    }
}
