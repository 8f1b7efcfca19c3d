package io.tierlog.bench.groups;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.bench.compare.Durability;
import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.KafkaLibsOption;
import io.tierlog.bench.compare.LoadSampler;
import io.tierlog.bench.compare.BenchRun;
import io.tierlog.bench.compare.PackagedServiceOption;
import io.tierlog.bench.compare.Samples;
import io.tierlog.bench.compare.TierlogService;
import io.tierlog.bench.compare.TierlogSystem;
import io.tierlog.bench.compare.Workspace;
import io.tierlog.bench.http.BlockingHttp;
import io.tierlog.bench.kafka.KafkaBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * {@code tierlog-bench groups}: consumer-group failover and join times, Tierlog's HTTP membership (docs/api.md
 * "Consumer groups that share work") beside Kafka 4.4.0's consumer group with the KIP-848 protocol
 * ({@code group.protocol=consumer}), with equal session timeouts and heartbeat intervals (issue #22).
 *
 * <p>Each system has a group of {@code --members} members on a topic of {@code --partitions} partitions, each
 * partition holding a few records; members commit nothing, so a new owner reads a partition from offset 0 and
 * gets a record at once. Kafka members run in child JVMs ({@link KafkaProcessMember}) so a death is a SIGKILL (in
 * process, a closed consumer sends a leave). A trial on one system: (a) <b>death</b>: one member stops heartbeating without leaving;
 * the time until the survivors have read a record from every partition it owned; (b) <b>join</b>: a new member
 * starts; the time until it has read a record from each partition of its share (partitions / members). Between
 * trials the group is let settle (every partition owned by one member, balanced, read by its owner). The two
 * systems take turns, the order alternating from trial to trial.
 */
@Command(name = "groups", mixinStandardHelpOptions = true,
        description = "Consumer-group failover (a member dies) and join times, Tierlog vs Kafka 4.4.0 (KIP-848).")
public final class GroupsCommand implements java.util.concurrent.Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TRIAL_TIMEOUT = Duration.ofSeconds(90);

    @Mixin
    PackagedServiceOption app;
    @Mixin
    KafkaLibsOption kafkaLibs;
    @Option(names = "--work-dir", defaultValue = "bench/target/groups")
    Path work;
    @Option(names = "--trials", defaultValue = "20", description = "Trials of each kind per system (default: ${DEFAULT-VALUE}).")
    int trials;
    @Option(names = "--members", defaultValue = "3", description = "Members before a death (default: ${DEFAULT-VALUE}).")
    int members;
    @Option(names = "--partitions", defaultValue = "12", description = "Partitions of the topic (default: ${DEFAULT-VALUE}).")
    int partitions;
    @Option(names = "--session-timeout-ms", defaultValue = "6000",
            description = "Session timeout of both systems (default: ${DEFAULT-VALUE}); heartbeats a third of it apart.")
    long sessionTimeoutMs;
    @Option(names = "--keep", description = "Keep the work directory.")
    boolean keep;

    /**
     * Starts Kafka members as child JVMs ({@link KafkaProcessMember}, killable with SIGKILL): one is always started
     * ahead, ready to join, so that a join trial does not count a JVM start, and the next one is started once a
     * trial is over ({@link #prepare}), outside the measured time.
     */
    private static final class KafkaStarter implements BiFunction<String, Tracker, Member> {
        private final String bootstrap;
        private final String group;
        private final String topic;
        private final Path log;
        private KafkaProcessMember standby;
        private Tracker tracker;
        private int count;

        KafkaStarter(String bootstrap, String group, String topic, Path log) {
            this.bootstrap = bootstrap;
            this.group = group;
            this.topic = topic;
            this.log = log;
        }

        @Override
        public Member apply(String ignored, Tracker t) {
            tracker = t;
            prepare();
            KafkaProcessMember m = standby;
            standby = null;
            m.go();
            return m;
        }

        /** Starts the next member's JVM unless one is waiting. */
        void prepare() {
            if (standby == null && tracker != null) {
                standby = new KafkaProcessMember("kafka-p" + (++count), bootstrap, group, topic, tracker, log);
            }
        }

        void awaitStandbyReady() {
            prepare();
            standby.awaitReady();
        }

        void closeStandby() {
            if (standby != null) {
                standby.kill();
            }
        }
    }

    /** One system's group under test: its live members and how to start one. */
    private static final class Group {
        final String system;
        final List<Member> live = new ArrayList<>();
        final BiFunction<String, Tracker, Member> starter;
        final Tracker tracker = new Tracker();
        final List<Double> deaths = new ArrayList<>();
        final List<Double> joins = new ArrayList<>();
        int started;

        Group(String system, BiFunction<String, Tracker, Member> starter) {
            this.system = system;
            this.starter = starter;
        }

        Member start() {
            Member m = starter.apply(system.toLowerCase(Locale.ROOT) + "-m" + (++started), tracker);
            live.add(m);
            return m;
        }
    }

    @Override
    public Integer call() throws Exception {
        BenchRun setup = BenchRun.prepare(work, app.path());
        Path repo = setup.repo();
        Path workDir = setup.workDir();
        Path runJar = setup.runJar();
        Instant started = setup.started();
        String git = setup.git();
        Map<String, String> machine = setup.machine();
        long heartbeatMs = Math.min(5000, sessionTimeoutMs / 3);
        Map<String, String> kafkaConfig = new LinkedHashMap<>();
        kafkaConfig.put("group.consumer.session.timeout.ms", Long.toString(sessionTimeoutMs));
        kafkaConfig.put("group.consumer.min.session.timeout.ms", Long.toString(sessionTimeoutMs));
        kafkaConfig.put("group.consumer.heartbeat.interval.ms", Long.toString(heartbeatMs));
        kafkaConfig.put("group.consumer.min.heartbeat.interval.ms", Long.toString(heartbeatMs));
        String topic = "groups-bench";
        List<Group> groups = new ArrayList<>();
        try (LoadSampler load = LoadSampler.start();
             EmbeddedS3 s3 = EmbeddedS3.start(workDir.resolve("s3"));
             KafkaBroker broker = KafkaBroker.start(repo.resolve(kafkaLibs.path()), workDir.resolve("kafka"), kafkaConfig)) {
            s3.createBucket("bench");
            try (TierlogService service = TierlogService.start(runJar, workDir.resolve("tierlog"), Durability.NEVER, s3,
                    "bench", List.of())) {
                Workspace.log("Kafka " + broker.bootstrapServers() + ", Tierlog " + service.baseUri());
                fillKafka(broker.bootstrapServers(), topic);
                fillTierlog(service, topic);
                KafkaStarter kafkaStarter = new KafkaStarter(broker.bootstrapServers(), "bench-group", topic,
                        workDir.resolve("kafka-members.log"));
                groups.add(new Group("Kafka", kafkaStarter));
                groups.add(new Group("Tierlog", (name, t) -> new TierlogMember(name, service.baseUri(), "bench-group",
                        topic, sessionTimeoutMs, t)));
                try {
                    for (Group g : groups) {
                        for (int i = 0; i < members; i++) {
                            g.start();
                        }
                        awaitStable(g);
                        Workspace.log(g.system + ": " + members + " members stable");
                    }
                    for (int trial = 1; trial <= trials; trial++) {
                        List<Group> order = trial % 2 == 1 ? groups : List.of(groups.get(1), groups.get(0));
                        for (Group g : order) {
                            double death = deathTrial(g, trial);
                            double join = joinTrial(g);
                            Workspace.log(String.format(Locale.ROOT, "trial %d %-7s: death → reconsumed %.0f ms, "
                                    + "join → balanced %.0f ms", trial, g.system, death, join));
                        }
                    }
                } finally {
                    for (Group g : groups) {
                        g.live.forEach(Member::close);
                    }
                    kafkaStarter.closeStandby();
                }
            }
            print(groups, started, git, machine, load.summary(), heartbeatMs);
        } finally {
            if (!keep) {
                Workspace.deleteTree(workDir);
            }
        }
        return 0;
    }

    /** Kills one member; ms until the survivors have read a record of every partition it owned. */
    private double deathTrial(Group g, int trial) throws Exception {
        Member victim = g.live.get(trial % g.live.size());
        Set<Integer> orphaned = new HashSet<>(victim.owned());
        long t0 = System.nanoTime();
        victim.kill();
        g.live.remove(victim);
        long deadline = t0 + TRIAL_TIMEOUT.toNanos();
        while (true) {
            long last = 0;
            boolean all = true;
            for (int p : orphaned) {
                Tracker.Take take = g.tracker.take(p);
                if (take == null || take.nanos() <= t0 || take.member().equals(victim.name())) {
                    all = false;
                    break;
                }
                last = Math.max(last, take.nanos());
            }
            if (all) {
                double ms = (last - t0) / 1e6;
                g.deaths.add(ms);
                awaitStable(g);
                return ms;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(g.system + ": partitions " + orphaned + " of the dead member not "
                        + "reconsumed within " + TRIAL_TIMEOUT);
            }
            g.tracker.awaitChange(50);
        }
    }

    /** Starts a member; ms until it has read a record of each partition of its share. */
    private double joinTrial(Group g) throws Exception {
        if (g.starter instanceof KafkaStarter k) {
            k.awaitStandbyReady(); // the clock starts once its JVM has a consumer, as a Tierlog member is a thread
        }
        long t0 = System.nanoTime();
        Member joiner = g.start();
        int share = partitions / g.live.size();
        long deadline = t0 + TRIAL_TIMEOUT.toNanos();
        while (true) {
            List<Long> times = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                Tracker.Take take = g.tracker.take(p);
                if (take != null && take.nanos() > t0 && take.member().equals(joiner.name())) {
                    times.add(take.nanos());
                }
            }
            if (times.size() >= share) {
                times.sort(null);
                double ms = (times.get(share - 1) - t0) / 1e6;
                g.joins.add(ms);
                awaitStable(g);
                return ms;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(g.system + ": the new member read " + times.size() + " of its " + share
                        + " partitions within " + TRIAL_TIMEOUT);
            }
            g.tracker.awaitChange(50);
        }
    }

    /**
     * Waits until every partition has exactly one owner among the live members, owners' counts differ by at most
     * one, and each owner has read its partitions.
     */
    private void awaitStable(Group g) throws InterruptedException {
        long deadline = System.nanoTime() + TRIAL_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (stable(g)) {
                Thread.sleep(200);
                if (stable(g)) {
                    if (g.starter instanceof KafkaStarter k) {
                        k.prepare();
                        Thread.sleep(3000); // its JVM start is not the next trial's business
                    }
                    return;
                }
            }
            g.tracker.awaitChange(50);
        }
        throw new IllegalStateException(g.system + ": the group did not settle within " + TRIAL_TIMEOUT);
    }

    private boolean stable(Group g) {
        Set<Integer> seen = new HashSet<>();
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (Member m : g.live) {
            Set<Integer> owned = m.owned();
            for (int p : owned) {
                Tracker.Take take = g.tracker.take(p);
                if (!seen.add(p) || take == null || !take.member().equals(m.name())) {
                    return false;
                }
            }
            min = Math.min(min, owned.size());
            max = Math.max(max, owned.size());
        }
        return seen.size() == partitions && max - min <= 1;
    }

    private void fillKafka(String bootstrap, String topic) throws Exception {
        Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(a)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int part = 0; part < partitions; part++) {
                for (int i = 0; i < 10; i++) {
                    producer.send(new ProducerRecord<>(topic, part, null, ("r" + i).getBytes(StandardCharsets.UTF_8)));
                }
            }
            producer.flush();
        }
    }

    private void fillTierlog(TierlogService service, String topic) throws Exception {
        new TierlogSystem(service, Clock.systemUTC()).createTopic(topic, partitions, JSON.createObjectNode());
        ObjectNode body = JSON.createObjectNode();
        ArrayNode records = body.putArray("records");
        for (int part = 0; part < partitions; part++) {
            for (int i = 0; i < 10; i++) {
                records.addObject().put("partition", part).put("value", "r" + i);
            }
        }
        byte[] bytes = JSON.writeValueAsBytes(body);
        URI u = service.baseUri().resolve("/v1/topics/" + topic + "/records");
        BlockingHttp.Posted r = BlockingHttp.post(u, "application/json", bytes, 0, bytes.length,
                BlockingHttp.CONNECT_TIMEOUT, Duration.ofSeconds(30));
        if (r.status() != 200) {
            throw new IllegalStateException("produce answered " + r.status() + ": " + r.bodyText());
        }
    }

    private void print(List<Group> groups, Instant started, String git, Map<String, String> machine, String load,
                       long heartbeatMs) {
        System.out.printf(Locale.ROOT, "Run %s, git `%s`, %s × %s, %d trials of each kind per system (systems "
                        + "alternating), took %d s; %s.%n%n", started, git, machine.get("nproc"), machine.get("cpu"),
                trials, Duration.between(started, Instant.now()).toSeconds(), load);
        System.out.printf(Locale.ROOT, "Topic of %d partitions, %d members before a death; session timeout %d ms and "
                        + "heartbeat interval %d ms on both (Kafka: `group.consumer.session.timeout.ms`, "
                        + "`group.consumer.heartbeat.interval.ms` and their minimums on the broker; Tierlog: "
                        + "`sessionTimeoutMs` in the heartbeat, the interval the answers ask for: a third of it, "
                        + "shorter while a member waits for partitions or another member's session is running out; "
                        + "one instance, which expires a member it heard on its own clock, without the "
                        + "`tierlog.groups.max-clock-skew` margin, ADR 0018). Kafka 4.4.0: `group.protocol=consumer` "
                        + "(KIP-848), each member in its own JVM, a death is `SIGKILL`; a Tierlog member is a thread of the benchmark "
                        + "that heartbeats over HTTP, a death is the thread stopping (no leave). No commits: a new "
                        + "owner reads from offset 0.%n%n",
                partitions, members, sessionTimeoutMs, heartbeatMs);
        System.out.println("| measure | Kafka p50 / p99 ms (min–max) | Tierlog p50 / p99 ms (min–max) | Tierlog/Kafka p50 | p99 |");
        System.out.println("|---|---|---|---|---|");
        row("member dies → its partitions reconsumed", groups.get(0).deaths, groups.get(1).deaths);
        row("member joins → group balanced", groups.get(0).joins, groups.get(1).joins);
    }

    private static void row(String what, List<Double> kafka, List<Double> tierlog) {
        Samples k = new Samples(kafka);
        Samples t = new Samples(tierlog);
        System.out.printf(Locale.ROOT, "| %s | %,.0f / %,.0f (%,.0f–%,.0f) | %,.0f / %,.0f (%,.0f–%,.0f) | %.2fx | %.2fx |%n",
                what, k.percentile(50), k.percentile(99), k.min(), k.max(), t.percentile(50), t.percentile(99), t.min(),
                t.max(), t.percentile(50) / k.percentile(50), t.percentile(99) / k.percentile(99));
    }
}
