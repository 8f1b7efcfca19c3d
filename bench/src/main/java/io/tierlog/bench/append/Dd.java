package io.tierlog.bench.append;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The disk's own sequential write speed, by {@code dd if=/dev/zero}, as a reference for the append numbers. */
final class Dd {
    /** dd's summary line: "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.5 s, 430 MB/s". */
    private static final Pattern SUMMARY = Pattern.compile("(\\d+) bytes .* copied, ([0-9.]+) s");

    private Dd() {
    }

    /** Writes a fresh file and returns MB/s (10^6 bytes per second); {@code flag} is e.g. conv=fsync, or null. */
    static double write(Path file, String bs, String count, String flag) {
        List<String> cmd = new ArrayList<>(List.of("dd", "if=/dev/zero", "of=" + file, "bs=" + bs, "count=" + count));
        if (flag != null) {
            cmd.add(flag);
        }
        try {
            Files.deleteIfExists(file);
            Shell.Output out = Shell.run(cmd);
            Files.deleteIfExists(file);
            Matcher m = SUMMARY.matcher(out.stderr());
            if (out.exitCode() != 0 || !m.find()) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out.stderr());
            }
            return Long.parseLong(m.group(1)) / 1e6 / Double.parseDouble(m.group(2));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
