package io.tierlog.cli;

import io.tierlog.client.Admin;
import io.tierlog.client.Consumer;
import io.tierlog.client.ConsumerConfig;
import io.tierlog.client.ConsumerRecord;
import io.tierlog.client.RebalanceListener;
import io.tierlog.client.TierlogClient;
import io.tierlog.client.TopicPartition;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code tierlog consume TOPIC}: prints records, from the start, the end, an offset, a time or a group's committed
 * offsets, until the end of the log as it was when the command started (the default), for ever ({@code --follow})
 * or for {@code --max-records}. With a group it joins as a member and commits what it printed.
 */
@Command(name = "consume", description = "Print records of a topic.")
final class ConsumeCommand extends Leaf {
    @Parameters(index = "0", paramLabel = "TOPIC")
    String topic;
    @Option(names = {"-p", "--partition"}, description = "A partition to read (repeatable; default: all).")
    List<Integer> partitions = new ArrayList<>();
    @Option(names = {"-g", "--group"}, description = "Consume as a member of this group; commits what it printed.")
    String group;
    @Option(names = "--from", paramLabel = "earliest|latest|OFFSET",
            description = "Where to start (default: the group's committed offsets, else earliest).")
    String from;
    @Option(names = "--from-timestamp", paramLabel = "MS|ISO-8601",
            description = "Start at the first record at or after this time (epoch ms or e.g. 2026-12-01T10:00:00Z).")
    String fromTimestamp;

    @ArgGroup(exclusive = true)
    Until until = new Until();

    static final class Until {
        @Option(names = {"-f", "--follow"}, description = "Keep waiting for new records (Ctrl-C to stop).")
        boolean follow;
        @Option(names = "--until-end", description = "Stop at the end of the log as of the start (the default).")
        boolean untilEnd;
    }

    @Option(names = {"-n", "--max-records"}, description = "Stop after this many records.")
    Long maxRecords;
    @Option(names = "--format", paramLabel = "value|kv|json",
            description = "Each record as its value, key<sep>value, or a JSON line (default value; json with -o json).")
    RecordPrinter.Format format;
    @Option(names = "--separator", description = "Between key and value in kv format (default: a tab).")
    String separator = "\t";
    @Option(names = "--isolation", paramLabel = "read_uncommitted|read_committed",
            description = "read_committed: only records of committed Kafka transactions, up to the last stable offset "
                    + "(default read_uncommitted: every record).")
    Isolation isolation = Isolation.read_uncommitted;

    /** The option's values, as the service and Kafka spell them. */
    enum Isolation { read_uncommitted, read_committed }

    @Override
    int run() {
        if (from != null && fromTimestamp != null) {
            throw new TierlogCli.UsageException("give --from or --from-timestamp, not both");
        }
        RecordPrinter printer = new RecordPrinter(format != null ? format
                : json() ? RecordPrinter.Format.json : RecordPrinter.Format.value, separator);
        TierlogClient client = client();
        Admin admin = client.admin();
        ConsumerConfig config = (group == null ? ConsumerConfig.defaults() : ConsumerConfig.group(group))
                .withClientId("tierlog-cli").withAutoCommit(group != null)
                .withAutoOffsetReset("latest".equals(from) ? ConsumerConfig.OffsetReset.LATEST
                        : ConsumerConfig.OffsetReset.EARLIEST)
                .withIsolation(isolation == Isolation.read_committed ? ConsumerConfig.Isolation.READ_COMMITTED
                        : ConsumerConfig.Isolation.READ_UNCOMMITTED);
        Map<TopicPartition, Long> ends = new ConcurrentHashMap<>();
        boolean follow = until.follow;
        long printed = 0;
        try (Consumer consumer = client.consumer(config)) {
            if (group != null) {
                if (!partitions.isEmpty()) {
                    throw new TierlogCli.UsageException("--partition and --group exclude each other: the group assigns");
                }
                consumer.subscribe(List.of(topic), new RebalanceListener() {
                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> added) {
                        added.forEach(tp -> {
                            start(consumer, admin, tp);
                            ends.put(tp, end(admin, tp));
                        });
                    }

                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> gone) {
                        gone.forEach(ends::remove);
                    }
                });
            } else {
                int count = admin.describeTopic(topic).partitions();
                List<TopicPartition> tps = new ArrayList<>();
                for (int p : partitions.isEmpty() ? range(count) : partitions) {
                    tps.add(new TopicPartition(topic, p));
                }
                consumer.assign(tps);
                for (TopicPartition tp : tps) {
                    ends.put(tp, end(admin, tp));
                    start(consumer, admin, tp);
                }
            }
            boolean assignedOnce = group == null;
            while (maxRecords == null || printed < maxRecords) {
                if (!follow && assignedOnce && atEnd(consumer, ends)) {
                    break;
                }
                List<ConsumerRecord> batch = consumer.poll(Duration.ofMillis(500));
                for (int i = 0; i < batch.size(); i++) {
                    if (maxRecords != null && printed >= maxRecords) {
                        // Not printed, so not consumed: each partition goes back to its first record left out.
                        Map<TopicPartition, Long> back = new java.util.HashMap<>();
                        batch.subList(i, batch.size()).forEach(r -> back.putIfAbsent(r.topicPartition(), r.offset()));
                        back.forEach(consumer::seek);
                        break;
                    }
                    printer.print(out(), batch.get(i));
                    printed++;
                }
                out().flush();
                assignedOnce |= !consumer.assignment().isEmpty();
            }
            if (group != null) {
                consumer.commitSync();
            }
        }
        err().println("consumed " + printed + " records");
        return TierlogCli.OK;
    }

    private void start(Consumer consumer, Admin admin, TopicPartition tp) {
        if (fromTimestamp != null) {
            consumer.seek(tp, admin.offsetForTimestamp(tp.topic(), tp.partition(), timestamp(fromTimestamp)));
        } else if ("earliest".equals(from)) {
            consumer.seek(tp, admin.earliestOffset(tp.topic(), tp.partition()));
        } else if ("latest".equals(from)) {
            consumer.seek(tp, end(admin, tp));
        } else if (from != null) {
            try {
                consumer.seek(tp, Long.parseLong(from));
            } catch (NumberFormatException e) {
                throw new TierlogCli.UsageException("--from must be earliest, latest or an offset: " + from);
            }
        }
    }

    /** The end of what this command reads: the last stable offset at read_committed, else the high watermark. */
    private long end(Admin admin, TopicPartition tp) {
        return isolation == Isolation.read_committed ? admin.lastStableOffset(tp.topic(), tp.partition())
                : admin.latestOffset(tp.topic(), tp.partition());
    }

    private static boolean atEnd(Consumer consumer, Map<TopicPartition, Long> ends) {
        for (TopicPartition tp : consumer.assignment()) {
            Long end = ends.get(tp);
            Long position = consumer.position(tp);
            if (end == null || position == null || position < end) {
                return false;
            }
        }
        return true;
    }

    static long timestamp(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException notMillis) {
            try {
                return Instant.parse(text).toEpochMilli();
            } catch (java.time.format.DateTimeParseException e) {
                throw new TierlogCli.UsageException("not epoch milliseconds or an ISO-8601 instant: " + text);
            }
        }
    }

    static List<Integer> range(int n) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(i);
        }
        return out;
    }
}
