package io.tierlog.cli;

import io.tierlog.client.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.LinkedHashMap;
import java.util.Map;

/** {@code tierlog topics create|list|describe|alter|delete}. */
@Command(name = "topics", description = "Create, list, describe, alter and delete topics.",
        subcommands = {TopicsCommand.Create.class, TopicsCommand.ListTopics.class, TopicsCommand.Describe.class,
                TopicsCommand.Alter.class, TopicsCommand.Delete.class})
final class TopicsCommand {

    /** {@code key=value} pairs as JSON values: integers as numbers, anything else as strings. */
    static Map<String, Object> configs(Map<String, String> raw) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (raw != null) {
            raw.forEach((k, v) -> {
                try {
                    out.put(k, Long.parseLong(v));
                } catch (NumberFormatException notANumber) {
                    out.put(k, v);
                }
            });
        }
        return out;
    }

    @Command(name = "create", description = "Create a topic.")
    static final class Create extends Leaf {
        @Parameters(index = "0", paramLabel = "TOPIC")
        String name;
        @Option(names = {"-p", "--partitions"}, required = true, description = "1..1024")
        int partitions;
        @Option(names = {"-c", "--config"}, paramLabel = "KEY=VALUE", description = "A topic config (repeatable).")
        Map<String, String> config;

        @Override
        int run() {
            Admin.TopicDescription t = client().admin().createTopic(name, partitions, configs(config));
            out().println(json() ? Json.write(t) : "created topic " + t.name() + " with " + t.partitions() + " partitions");
            return TierlogCli.OK;
        }
    }

    @Command(name = "list", description = "List topics.")
    static final class ListTopics extends Leaf {
        @Override
        int run() {
            var topics = client().admin().listTopics();
            if (json()) {
                out().println(Json.write(Map.of("topics", topics)));
            } else {
                Table t = new Table("TOPIC", "PARTITIONS");
                topics.forEach(x -> t.row(x.name(), x.partitions()));
                t.print(out());
            }
            return TierlogCli.OK;
        }
    }

    @Command(name = "describe", description = "A topic's config and its partitions across both tiers.")
    static final class Describe extends Leaf {
        @Parameters(index = "0", paramLabel = "TOPIC")
        String name;

        @Override
        int run() {
            Admin.TopicDescription d = client().admin().describeTopic(name);
            if (json()) {
                out().println(Json.write(d));
                return TierlogCli.OK;
            }
            out().println("topic " + d.name() + ", " + d.partitions() + " partitions");
            d.config().forEach((k, v) -> out().println("  " + k + " = " + v));
            Table t = new Table("PARTITION", "LOG-START", "HOT-START", "HIGH-WATERMARK", "HOT-BYTES", "COLD-BYTES",
                    "SEGMENTS-HOT", "SEGMENTS-COLD");
            d.partitionStates().forEach(p -> t.row(p.partition(), p.logStartOffset(), p.hotStartOffset(),
                    p.highWatermark(), p.hotBytes(), p.coldBytes(), p.segments() == null ? "" : p.segments().hot(),
                    p.segments() == null ? "" : p.segments().cold()));
            t.print(out());
            return TierlogCli.OK;
        }
    }

    @Command(name = "alter", description = "Change a topic's config keys.")
    static final class Alter extends Leaf {
        @Parameters(index = "0", paramLabel = "TOPIC")
        String name;
        @Option(names = {"-c", "--config"}, required = true, paramLabel = "KEY=VALUE", description = "Repeatable.")
        Map<String, String> config;

        @Override
        int run() {
            Map<String, Object> now = client().admin().alterTopicConfig(name, configs(config));
            if (json()) {
                out().println(Json.write(now));
            } else {
                now.forEach((k, v) -> out().println(k + " = " + v));
            }
            return TierlogCli.OK;
        }
    }

    @Command(name = "delete", description = "Delete a topic with all its data in both tiers.")
    static final class Delete extends Leaf {
        @Parameters(index = "0", paramLabel = "TOPIC")
        String name;

        @Override
        int run() {
            client().admin().deleteTopic(name);
            out().println(json() ? Json.write(Map.of("deleted", name)) : "deleted topic " + name);
            return TierlogCli.OK;
        }
    }
}
