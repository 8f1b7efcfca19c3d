package io.tierlog.service.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonGenerator;
import io.tierlog.http.Encoding;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;
import io.tierlog.service.read.FetchResult;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Renders read answers: the fetch body {@code {"topic", "partition", "records", "nextOffset", "highWatermark",
 * "logStartOffset"}}, and a batch of SSE events for the stream. Each renders into one buffer sized from the
 * records up front, with one generator for the whole answer. Thread-safe.
 */
public final class FetchJson {
    /** No separator between root values: SSE framing is written between the records of a batch. */
    private static final JsonFactory FACTORY = new JsonFactoryBuilder().rootValueSeparator((String) null).build();
    private static final byte[] EVENT_ID = "id: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT_RECORD = "\nevent: record\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "data: ".getBytes(StandardCharsets.US_ASCII);

    private FetchJson() {
    }

    public static byte[] render(TopicPartition tp, FetchResult result, Encoding encoding) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256 + estimate(result.records(), encoding));
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("topic", tp.topic());
            g.writeNumberField("partition", tp.partition());
            g.writeArrayFieldStart("records");
            for (LogRecord r : result.records()) {
                RecordJson.write(g, null, 0, r, encoding);
            }
            g.writeEndArray();
            g.writeNumberField("nextOffset", result.nextOffset());
            g.writeNumberField("highWatermark", result.highWatermark());
            g.writeNumberField("logStartOffset", result.logStartOffset());
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /**
     * The records as SSE events: {@code id: <offset>}, {@code event: record}, {@code data: <record JSON with topic
     * and partition>}, blank line. A stored JSON value embedded as is may span lines; SSE's {@code data} field
     * ends at a line break, so such a record is sent as several {@code data:} lines, which the client joins with
     * {@code \n}: a line break only ever occurs between JSON tokens, so the joined text is the same JSON.
     */
    public static byte[] sseEvents(TopicPartition tp, List<LogRecord> records, Encoding encoding) {
        Sink out = new Sink(records.size() * (64 + tp.topic().length()) + estimate(records, encoding));
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            for (LogRecord r : records) {
                out.write(EVENT_ID);
                out.writeAscii(Long.toString(r.offset()));
                out.write(EVENT_RECORD);
                out.write(DATA);
                int start = out.size();
                boolean lineBreaks = RecordJson.write(g, tp.topic(), tp.partition(), r, encoding);
                g.flush();
                if (lineBreaks) {
                    out.splitLines(start);
                }
                out.write('\n');
                out.write('\n');
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** A size hint: the stored bytes (x4/3 when base64 may be used) plus fixed overhead per record. */
    private static int estimate(List<LogRecord> records, Encoding encoding) {
        long bytes = 0;
        for (LogRecord r : records) {
            long n = 64 + length(r.key()) + length(r.value());
            for (Header h : r.headers()) {
                n += 8 + h.name().length() + length(h.value());
            }
            bytes += encoding == Encoding.BASE64 ? n * 4 / 3 : n;
        }
        return (int) Math.min(bytes, Integer.MAX_VALUE - 1024);
    }

    private static int length(byte[] b) {
        return b == null ? 0 : b.length;
    }

    /** An unsynchronised output buffer that can break a just-written record into SSE data lines. */
    private static final class Sink extends ByteArrayOutputStream {
        Sink(int capacity) {
            super(capacity);
        }

        @Override
        public void write(int b) {
            ensure(1);
            buf[count++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            ensure(len);
            System.arraycopy(b, off, buf, count, len);
            count += len;
        }

        @Override
        public void write(byte[] b) {
            write(b, 0, b.length);
        }

        void writeAscii(String s) {
            ensure(s.length());
            for (int i = 0; i < s.length(); i++) {
                buf[count++] = (byte) s.charAt(i);
            }
        }

        /** Rewrites {@code buf[from, count)} so that each CR, LF or CRLF becomes a line break plus {@code data: }. */
        void splitLines(int from) {
            int breaks = 0;
            for (int i = from; i < count; i++) {
                if (buf[i] == '\n' || buf[i] == '\r') {
                    breaks++;
                }
            }
            if (breaks == 0) {
                return;
            }
            byte[] record = java.util.Arrays.copyOfRange(buf, from, count);
            count = from;
            for (int i = 0; i < record.length; i++) {
                byte b = record[i];
                if (b == '\r' || b == '\n') {
                    if (b == '\r' && i + 1 < record.length && record[i + 1] == '\n') {
                        i++;
                    }
                    write('\n');
                    write(DATA);
                } else {
                    write(b);
                }
            }
        }

        private void ensure(int more) {
            if (count + more > buf.length) {
                buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, count + more));
            }
        }
    }
}
