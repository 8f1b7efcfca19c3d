package io.tierlog.sharegroups;

import io.tierlog.log.io.LockedStateFile;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.log.Names;
import io.tierlog.log.TopicPartition;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Where share groups live on the hot volume: {@code <data-dir>/__share_groups/<group>/config.json}, the members of
 * Kafka's share consumers in {@code <group>/members.json} ({@link ShareGroupMembers}), and one state file per
 * share-partition, {@code <data-dir>/__share_groups/<group>/<topic>/<partition>.json} (a binary state log since
 * ADR 0038, {@link ShareStateLog}; the name is kept so builds before it fail on the file instead of writing a second
 * one), each beside its {@code .lock} file. Lock files are left in place when a group is deleted: removing one
 * while another process waits on it would let two processes hold "the" lock at once. Thread-safe (stateless).
 */
final class ShareGroupFiles {
    static final String DIR = "__share_groups";
    private static final String MEMBERS_FILE = "members.json";
    static final ObjectMapper JSON = new ObjectMapper();

    private final Path root;
    private final boolean fsync;
    private final long minCompactBytes;

    ShareGroupFiles(Path dataDir) {
        this(dataDir, true, ShareStateLog.MIN_COMPACT_BYTES);
    }

    /**
     * @param fsync           whether share-partition state writes are fsynced ({@link ShareStateLog}); config always is
     * @param minCompactBytes see {@link ShareStateLog#ShareStateLog(Path, boolean, long)}
     */
    ShareGroupFiles(Path dataDir, boolean fsync, long minCompactBytes) {
        this.root = dataDir.resolve(DIR);
        this.fsync = fsync;
        this.minCompactBytes = minCompactBytes;
    }

    LockedStateFile config(String group) {
        return new LockedStateFile(groupDir(group).resolve("config.json"), true);
    }

    /** The group's members ({@link ShareGroupMembers}); fsynced like the config, whatever the fsync policy. */
    LockedStateFile members(String group) {
        return new LockedStateFile(groupDir(group).resolve(MEMBERS_FILE), true);
    }

    /** The groups with a members file, by name (a listing without locks: a group may appear at any time). */
    List<String> groupsWithMembers() {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        try (Stream<Path> groups = Files.list(root)) {
            return groups.filter(g -> Files.exists(g.resolve(MEMBERS_FILE))).map(g -> g.getFileName().toString())
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + root, e);
        }
    }

    /** The groups with anything stored (a config, members, share-partition state), by name; a listing without locks. */
    List<String> groups() {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        try (Stream<Path> groups = Files.list(root)) {
            return groups.filter(ShareGroupFiles::holdsAnything).map(g -> g.getFileName().toString()).sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + root, e);
        }
    }

    private static boolean holdsAnything(Path groupDir) {
        try (Stream<Path> entries = Files.list(groupDir)) {
            return entries.findAny().isPresent();
        } catch (IOException e) {
            return false; // removed while listed
        }
    }

    /** A share-partition's state log; an instance keeps it open and caches its state (see {@link ShareStateLog}). */
    ShareStateLog partition(String group, TopicPartition tp) {
        return new ShareStateLog(groupDir(group).resolve(Names.requireValidTopic(tp.topic()))
                .resolve(tp.partition() + ".json"), fsync, minCompactBytes);
    }

    /** The share-partitions of {@code group} with a state file, by topic. */
    Map<String, List<Integer>> partitions(String group) {
        Map<String, List<Integer>> out = new TreeMap<>();
        Path dir = groupDir(group);
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (Stream<Path> topics = Files.list(dir)) {
            for (Path t : topics.filter(Files::isDirectory).toList()) {
                List<Integer> ps = new ArrayList<>();
                try (Stream<Path> files = Files.list(t)) {
                    files.map(f -> f.getFileName().toString()).filter(n -> n.matches("[0-9]+\\.json"))
                            .forEach(n -> ps.add(Integer.parseInt(n.substring(0, n.length() - 5))));
                }
                if (!ps.isEmpty()) {
                    ps.sort(null);
                    out.put(t.getFileName().toString(), ps);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the share-partitions of group " + group, e);
        }
        return out;
    }

    private Path groupDir(String group) {
        return root.resolve(Names.requireValidGroup(group));
    }

    static <T> T read(byte[] bytes, Class<T> type) {
        try {
            return JSON.readValue(bytes, type);
        } catch (IOException e) {
            throw new UncheckedIOException("corrupt share-group state", e);
        }
    }

    static byte[] write(Object value) {
        try {
            return JSON.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot encode share-group state", e);
        }
    }
}
