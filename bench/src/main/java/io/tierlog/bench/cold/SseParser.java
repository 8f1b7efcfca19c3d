package io.tierlog.bench.cold;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * An incremental parser of a {@code text/event-stream} body (the WHATWG server-sent events format): bytes go in
 * through {@link #feed} in whatever pieces the network delivers, and each complete event is handed to the
 * {@link Listener} when its terminating blank line arrives. Lines end with LF, CRLF or CR; {@code field: value}
 * loses one space after the colon; comment lines ({@code :...}) are skipped; several {@code data:} lines join with
 * LF; an event without data is not dispatched, {@code event} resets after each dispatch and {@code id} carries
 * over to later events until set again (all as the spec says). The data stays bytes, so a benchmark can count and search it without decoding every record.
 *
 * <p>Not thread-safe: one parser per stream.
 */
final class SseParser {

    /** Receives each complete event. {@code data} is only valid during the call. */
    interface Listener {
        void onEvent(String id, String event, byte[] data, int dataLength);
    }

    private final Listener listener;
    private byte[] line = new byte[4096];
    private int lineLength;
    private byte[] data = new byte[4096];
    private int dataLength;
    private boolean hasData;
    private String id;
    private String event;
    private boolean lastWasCr;

    SseParser(Listener listener) {
        this.listener = listener;
    }

    /** Parses {@code length} more bytes of the stream. */
    void feed(byte[] bytes, int offset, int length) {
        int end = offset + length;
        int start = offset;
        for (int i = offset; i < end; i++) {
            byte b = bytes[i];
            if (b == '\n' || b == '\r') {
                boolean lfAfterCr = b == '\n' && lastWasCr && start == i && lineLength == 0;
                lastWasCr = b == '\r';
                if (lfAfterCr) {
                    start = i + 1; // the LF of a CRLF whose CR already ended the line
                    continue;
                }
                append(bytes, start, i - start);
                endLine();
                start = i + 1;
            } else {
                lastWasCr = false;
            }
        }
        append(bytes, start, end - start);
    }

    private void append(byte[] bytes, int from, int n) {
        if (n <= 0) {
            return;
        }
        if (lineLength + n > line.length) {
            line = Arrays.copyOf(line, Math.max(line.length * 2, lineLength + n));
        }
        System.arraycopy(bytes, from, line, lineLength, n);
        lineLength += n;
    }

    private void endLine() {
        int n = lineLength;
        lineLength = 0;
        if (n == 0) {
            dispatch();
            return;
        }
        if (line[0] == ':') {
            return; // comment (the service's heartbeat)
        }
        int colon = indexOf(line, n, (byte) ':');
        int nameEnd = colon < 0 ? n : colon;
        int valueStart = colon < 0 ? n : colon + 1;
        if (valueStart < n && line[valueStart] == ' ') {
            valueStart++;
        }
        if (is("data", nameEnd)) {
            int extra = (hasData ? 1 : 0) + n - valueStart;
            if (dataLength + extra > data.length) {
                data = Arrays.copyOf(data, Math.max(data.length * 2, dataLength + extra));
            }
            if (hasData) {
                data[dataLength++] = '\n';
            }
            System.arraycopy(line, valueStart, data, dataLength, n - valueStart);
            dataLength += n - valueStart;
            hasData = true;
        } else if (is("id", nameEnd)) {
            id = new String(line, valueStart, n - valueStart, StandardCharsets.UTF_8);
        } else if (is("event", nameEnd)) {
            event = new String(line, valueStart, n - valueStart, StandardCharsets.UTF_8);
        }
        // "retry" and unknown fields are ignored, as the spec says
    }

    private void dispatch() {
        if (hasData) {
            listener.onEvent(id, event == null ? "message" : event, data, dataLength);
        }
        hasData = false;
        dataLength = 0;
        event = null;
    }

    private boolean is(String name, int nameEnd) {
        if (nameEnd != name.length()) {
            return false;
        }
        for (int i = 0; i < nameEnd; i++) {
            if (line[i] != name.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] bytes, int n, byte b) {
        for (int i = 0; i < n; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
