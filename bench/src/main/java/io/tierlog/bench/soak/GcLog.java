package io.tierlog.bench.soak;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the service's unified GC log ({@code -Xlog:gc:file=...}) as it grows, for the heap occupancy right after
 * each collection ({@code Pause Young (Normal) (G1 Evacuation Pause) 120M->35M(512M) 3.4ms}): the figure a leak
 * shows in, where heap-used sampled at random points mostly shows how full the young generation happened to be.
 * Used from one thread.
 */
public final class GcLog {
    private static final Pattern PAUSE = Pattern.compile("GC\\((\\d+)\\) Pause (\\S+).*?(\\d+)([KMG])->(\\d+)([KMG])\\((\\d+)([KMG])\\)");

    private final Path file;
    private long position;
    private String partial = "";

    public GcLog(Path file) {
        this.file = file;
    }

    /** What the collections logged since the last call left: the last one, the lowest, and whether a full GC ran. */
    public record Window(int pauses, long lastAfterBytes, long minAfterBytes, long lastFullAfterBytes) {
        static final Window NONE = new Window(0, -1, -1, -1);
    }

    /** Reads the lines appended since the last call. A file not yet there is an empty window. */
    public Window next() {
        String text;
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            long length = f.length();
            if (length <= position) {
                return Window.NONE;
            }
            byte[] bytes = new byte[(int) Math.min(length - position, 64L << 20)];
            f.seek(position);
            f.readFully(bytes);
            position += bytes.length;
            text = partial + new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return Window.NONE;
        }
        int lastNewline = text.lastIndexOf('\n');
        partial = text.substring(lastNewline + 1);
        return parse(text.substring(0, lastNewline + 1));
    }

    /** The window of complete log lines {@code text}. */
    static Window parse(String text) {
        int pauses = 0;
        long last = -1;
        long min = -1;
        long full = -1;
        for (String line : text.split("\n")) {
            Matcher m = PAUSE.matcher(line);
            if (!m.find()) {
                continue;
            }
            long after = bytes(m.group(5), m.group(6));
            pauses++;
            last = after;
            min = min < 0 ? after : Math.min(min, after);
            if (m.group(2).equals("Full")) {
                full = after;
            }
        }
        return new Window(pauses, last, min, full);
    }

    private static long bytes(String number, String unit) {
        long n = Long.parseLong(number);
        return switch (unit) {
            case "K" -> n << 10;
            case "M" -> n << 20;
            default -> n << 30;
        };
    }
}
