package io.tierlog.bench.client;

import io.tierlog.bench.compare.Payload;
import io.tierlog.client.Producer;
import io.tierlog.client.ProducerRecord;
import io.tierlog.client.RecordMetadata;
import io.tierlog.client.TierlogClient;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * {@code tierlog-bench client-produce}: the client library's {@link Producer} (HTTP, record batches) against
 * kafka-clients' {@link KafkaProducer} (the service's Kafka listener), one after the other, against one running
 * service, with the same batching: unkeyed 1 KiB values into a fresh topic per run, linger 5 ms, 512 KiB batches,
 * idempotence on, no compression. Reports records/s per run, the medians and the client's ratio to Kafka's. Start
 * the service yourself (see docs/client.md, "Throughput").
 */
@Command(name = "client-produce", mixinStandardHelpOptions = true,
        description = "Tierlog's Java client Producer vs kafka-clients' KafkaProducer, against one running service.")
public final class ClientProduceCommand implements Callable<Integer> {
    @Option(names = "--url", description = "The service's HTTP address.")
    String url = "http://127.0.0.1:8080";
    @Option(names = "--kafka-bootstrap", description = "The service's Kafka listener.")
    String bootstrap = "127.0.0.1:9092";
    @Option(names = "--token", description = "Bearer token for HTTP (token mode).")
    String token;
    @Option(names = "--records")
    int records = 200_000;
    @Option(names = "--value-bytes")
    int valueBytes = 1024;
    @Option(names = "--partitions")
    int partitions = 8;
    @Option(names = "--runs")
    int runs = 3;

    @Override
    public Integer call() throws Exception {
        TierlogClient client = TierlogClient.builder().url(url).token(token).build();
        Payload payload = new Payload(valueBytes, 42);
        double[] ours = new double[runs];
        double[] kafkas = new double[runs];
        for (int run = 0; run < runs; run++) {
            ours[run] = clientRun(client, payload, topic(client, "client"));
            kafkas[run] = kafkaRun(payload, topic(client, "kafka"));
            System.out.printf("run %d: client %,.0f records/s, kafka-clients %,.0f records/s%n", run + 1, ours[run],
                    kafkas[run]);
        }
        double o = median(ours);
        double k = median(kafkas);
        System.out.printf("median: client %,.0f records/s (%.1f MB/s), kafka-clients %,.0f records/s (%.1f MB/s); "
                + "ratio %.2f%n", o, o * valueBytes / 1e6, k, k * valueBytes / 1e6, o / k);
        return 0;
    }

    private String topic(TierlogClient client, String side) {
        String name = "bench-" + side + "-" + UUID.randomUUID().toString().substring(0, 8);
        client.admin().createTopic(name, partitions, java.util.Map.of("segment.bytes", 1L << 30));
        return name;
    }

    private double clientRun(TierlogClient client, Payload payload, String topic) {
        io.tierlog.client.ProducerConfig config = io.tierlog.client.ProducerConfig.defaults()
                .withLinger(Duration.ofMillis(5)).withBatchBytes(512 * 1024).withBuffer(64L << 20,
                        io.tierlog.client.ProducerConfig.WhenFull.BLOCK);
        long start = System.nanoTime();
        try (Producer producer = client.producer(config)) {
            List<CompletableFuture<RecordMetadata>> last = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                CompletableFuture<RecordMetadata> f = producer.send(new ProducerRecord(topic, null, null,
                        payload.bytes(i), null, null));
                if (i == records - 1) {
                    last.add(f);
                }
            }
            producer.flush();
            last.forEach(CompletableFuture::join);
        }
        return records / ((System.nanoTime() - start) / 1e9);
    }

    private double kafkaRun(Payload payload, String topic) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024);
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 64L << 20);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        long start = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            Future<?> last = null;
            for (int i = 0; i < records; i++) {
                last = producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, payload.bytes(i)));
            }
            producer.flush();
            last.get();
        }
        return records / ((System.nanoTime() - start) / 1e9);
    }

    private static double median(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
