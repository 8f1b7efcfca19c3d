package io.tierlog.bench.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JVM's own account of its native memory ({@code jcmd <pid> VM.native_memory summary}, which needs the service
 * started with {@code -XX:NativeMemoryTracking=summary}): committed KiB per category (Java Heap, Code, Class,
 * Thread, GC, Compiler, Internal, Other, Symbol, Arena Chunk, ...) and the total. Memory that native libraries
 * allocate themselves (RocksDB's memtables and block cache, glibc's arenas) is not in it: RSS growth that these
 * categories do not show is theirs.
 */
public final class NativeMemory {
    private static final Pattern TOTAL = Pattern.compile("Total: reserved=(\\d+)KB, committed=(\\d+)KB");
    private static final Pattern CATEGORY = Pattern.compile("-\\s+([A-Za-z][A-Za-z ]*?) \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");

    private NativeMemory() {
    }

    /** Committed MiB by category, with "Total"; empty when jcmd fails or tracking is off. */
    public static Map<String, Double> committedMib(long pid) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "VM.native_memory", "summary")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(60, TimeUnit.SECONDS);
            return parse(out);
        } catch (IOException e) {
            return Map.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Map.of();
        }
    }

    static Map<String, Double> parse(String summary) {
        Map<String, Double> out = new LinkedHashMap<>();
        Matcher t = TOTAL.matcher(summary);
        if (t.find()) {
            out.put("Total", Long.parseLong(t.group(2)) / 1024.0);
        }
        Matcher m = CATEGORY.matcher(summary);
        while (m.find()) {
            out.putIfAbsent(m.group(1).trim(), Long.parseLong(m.group(3)) / 1024.0);
        }
        return out;
    }
}
