package io.tierlog.cli;

import io.tierlog.client.Admin;
import io.tierlog.client.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** {@code tierlog groups list|describe|lag|reset|delete}. */
@Command(name = "groups", description = "Consumer groups: list, describe, lag, reset, delete.",
        subcommands = {GroupsCommand.ListGroups.class, GroupsCommand.Describe.class, GroupsCommand.Lag.class,
                GroupsCommand.Reset.class, GroupsCommand.Delete.class})
final class GroupsCommand {

    @Command(name = "list", description = "Groups with committed offsets, and their total lag.")
    static final class ListGroups extends Leaf {
        @Override
        int run() {
            var groups = client().admin().listGroups();
            if (json()) {
                out().println(Json.write(Map.of("groups", groups)));
            } else {
                Table t = new Table("GROUP", "TOTAL-LAG");
                groups.forEach(g -> t.row(g.group(), g.totalLag()));
                t.print(out());
            }
            return TierlogCli.OK;
        }
    }

    @Command(name = "describe", description = "A group's state, members and their assignments.")
    static final class Describe extends Leaf {
        @Parameters(index = "0", paramLabel = "GROUP")
        String group;

        @Override
        int run() {
            Admin.GroupDescription d = client().admin().describeGroup(group);
            if (json()) {
                out().println(Json.write(d));
                return TierlogCli.OK;
            }
            out().println("group " + d.group() + ": " + d.state() + ", epoch " + d.groupEpoch() + ", "
                    + d.members().size() + " members");
            Table t = new Table("MEMBER", "CLIENT", "EPOCH", "ASSIGNMENT");
            d.members().forEach(m -> t.row(m.memberId(), m.clientId(), m.memberEpoch(), m.assignment().stream()
                    .map(a -> a.topic() + a.partitions()).collect(Collectors.joining(" "))));
            t.print(out());
            return TierlogCli.OK;
        }
    }

    @Command(name = "lag", description = "Committed offset, high watermark and lag per partition.")
    static final class Lag extends Leaf {
        @Parameters(index = "0", paramLabel = "GROUP")
        String group;

        @Override
        int run() {
            Admin.GroupLag lag = client().admin().groupLag(group);
            if (json()) {
                out().println(Json.write(lag));
                return TierlogCli.OK;
            }
            Table t = new Table("TOPIC", "PARTITION", "COMMITTED", "HIGH-WATERMARK", "LAG", "LAG-MS");
            lag.partitions().forEach(p -> t.row(p.topic(), p.partition(), p.committedOffset(), p.highWatermark(),
                    p.lag(), p.lagMs()));
            t.print(out());
            out().println("total lag " + lag.totalLag());
            return TierlogCli.OK;
        }
    }

    @Command(name = "reset", description = "Move a group (without members) to the start, the end or a time.")
    static final class Reset extends Leaf {
        @Parameters(index = "0", paramLabel = "GROUP")
        String group;
        @Option(names = {"-t", "--topic"}, required = true, description = "Repeatable.")
        List<String> topics;
        @Option(names = "--to", required = true, paramLabel = "earliest|latest|MS|ISO-8601")
        String to;

        @Override
        int run() {
            Map<TopicPartition, Long> now = switch (to) {
                case "earliest", "latest" -> client().admin().resetGroupOffsets(group, topics, to, null);
                default -> client().admin().resetGroupOffsets(group, topics, "timestamp", ConsumeCommand.timestamp(to));
            };
            if (json()) {
                out().println(Json.write(Map.of("group", group, "offsets", now.entrySet().stream().map(e -> Map.of(
                        "topic", e.getKey().topic(), "partition", e.getKey().partition(), "offset", e.getValue()))
                        .toList())));
            } else {
                Table t = new Table("TOPIC", "PARTITION", "OFFSET");
                now.forEach((tp, o) -> t.row(tp.topic(), tp.partition(), o));
                t.print(out());
            }
            return TierlogCli.OK;
        }
    }

    @Command(name = "delete", description = "Delete a group's offsets (it must have no members).")
    static final class Delete extends Leaf {
        @Parameters(index = "0", paramLabel = "GROUP")
        String group;

        @Override
        int run() {
            client().admin().deleteGroup(group);
            out().println(json() ? Json.write(Map.of("deleted", group)) : "deleted group " + group);
            return TierlogCli.OK;
        }
    }
}
