package io.tierlog.log.io;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Replaced versions of a state file: freed by the replacing rename, or kept until reclaimed when asked. */
class LockedStateFileTest {
    @TempDir
    Path dir;

    @Test
    void aWriteKeepsTheVersionItReplacesInTheReclaimDirectoryUntilReclaimed() throws IOException {
        Path file = dir.resolve("state.json");
        Path replaced = dir.resolve("replaced");
        LockedStateFile state = new LockedStateFile(file, dir.resolve("state.lock"), false, replaced);
        write(state, "v1");
        assertThat(replaced).as("nothing replaced yet").satisfiesAnyOf(
                p -> assertThat(p).doesNotExist(), p -> assertThat(p).isEmptyDirectory());
        Object v1Inode = inode(file);

        state.update(session -> {
            session.write(bytes("v2"));
            session.write(bytes("v3"));
            return null;
        });

        assertThat(new String(state.readUnlocked(), StandardCharsets.UTF_8)).isEqualTo("v3");
        List<String> kept = new ArrayList<>();
        List<Object> keptInodes = new ArrayList<>();
        try (Stream<Path> files = Files.list(replaced)) {
            for (Path p : files.toList()) {
                kept.add(Files.readString(p));
                keptInodes.add(inode(p));
            }
        }
        assertThat(kept).containsExactlyInAnyOrder("v1", "v2");
        assertThat(keptInodes).as("the replaced file itself, linked, not a copy").contains(v1Inode);

        assertThat(LockedStateFile.reclaim(replaced)).isEqualTo(2);
        assertThat(replaced).isEmptyDirectory();
        assertThat(new String(state.readUnlocked(), StandardCharsets.UTF_8)).isEqualTo("v3");
    }

    @Test
    void withoutAReclaimDirectoryNothingButTheStateAndItsLockRemains() throws IOException {
        LockedStateFile state = new LockedStateFile(dir.resolve("state.json"), true);
        write(state, "v1");
        write(state, "v2");
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("state.json", "state.json.lock");
        }
        assertThat(LockedStateFile.reclaim(dir.resolve("none"))).isZero();
    }

    private static void write(LockedStateFile state, String content) {
        state.update(session -> {
            session.write(bytes(content));
            return null;
        });
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Object inode(Path p) throws IOException {
        return Files.readAttributes(p, BasicFileAttributes.class).fileKey();
    }
}
