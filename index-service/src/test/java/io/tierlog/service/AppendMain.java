package io.tierlog.service;

import io.tierlog.http.JsonProduce;
import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.log.FsyncPolicy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

/**
 * A separate ingest process, as an ingest function on the shared volume would be: appends {@code count} records
 * {@code {"i": n}} (n from {@code first}) to one partition through {@link IngestService}, {@code perRequest} per
 * request. Args: dataDir topic partition first count perRequest.
 */
public final class AppendMain {
    public static void main(String[] args) throws Exception {
        Path dataDir = Path.of(args[0]);
        String topic = args[1];
        int partition = Integer.parseInt(args[2]);
        long first = Long.parseLong(args[3]);
        int count = Integer.parseInt(args[4]);
        int perRequest = Integer.parseInt(args[5]);
        try (IngestService ingest = new IngestService(new IngestConfig(dataDir, FsyncPolicy.NEVER, Duration.ofSeconds(1),
                IngestConfig.DEFAULT_MAX_REQUEST_BYTES), Clock.systemUTC(), 7)) {
            long n = first;
            while (n < first + count) {
                StringBuilder body = new StringBuilder("{\"records\":[");
                int k = (int) Math.min(perRequest, first + count - n);
                for (int i = 0; i < k; i++, n++) {
                    body.append(i == 0 ? "" : ",").append("{\"partition\":").append(partition)
                            .append(",\"value\":{\"i\":").append(n).append("}}");
                }
                body.append("]}");
                JsonProduce.produce(ingest, topic, body.toString().getBytes(StandardCharsets.UTF_8));
            }
        }
        System.out.println("appended " + count);
    }
}
