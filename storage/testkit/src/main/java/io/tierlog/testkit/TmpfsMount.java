package io.tierlog.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A small tmpfs mounted on a directory for the length of a test, so that "the volume is full" is a real
 * {@code ENOSPC} from the kernel rather than a simulated one. Mounting needs Linux and the right to mount (root, or
 * {@code CAP_SYS_ADMIN} in a container): {@link #tryMount} answers empty where it cannot, for the test to skip with
 * {@code Assumptions}. {@link #close} unmounts (lazily if something still holds a file open there).
 */
public final class TmpfsMount implements AutoCloseable {
    private final Path dir;

    private TmpfsMount(Path dir) {
        this.dir = dir;
    }

    /** Mounts a tmpfs of {@code bytes} on {@code dir} (created if missing); empty if this machine will not. */
    public static Optional<TmpfsMount> tryMount(Path dir, long bytes) {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return Optional.empty();
        }
        try {
            Files.createDirectories(dir);
            if (run(List.of("mount", "-t", "tmpfs", "-o", "size=" + bytes, "tmpfs", dir.toString()))) {
                return Optional.of(new TmpfsMount(dir));
            }
        } catch (IOException e) {
            // no mount binary, or not allowed: the caller skips
        }
        return Optional.empty();
    }

    public Path dir() {
        return dir;
    }

    @Override
    public void close() throws IOException {
        if (!run(List.of("umount", dir.toString())) && !run(List.of("umount", "-l", dir.toString()))) {
            throw new IOException("cannot unmount the tmpfs at " + dir);
        }
    }

    private static boolean run(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            return p.exitValue() == 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
