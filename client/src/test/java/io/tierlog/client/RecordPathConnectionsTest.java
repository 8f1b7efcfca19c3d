package io.tierlog.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The produce and fetch paths ({@link BlockingExchange}) against the real service: a producer's answers are handled
 * on its few request threads (not a new thread per answer, as the JDK HttpClient's async path did on a machine with
 * 2 cores, or in a Lambda function with one), and a consumer of 8 partitions keeps its connections open across
 * fetches instead of reconnecting (the JDK's keep-alive cache holds only 5 idle connections per host by default).
 */
@Tag("slow")
class RecordPathConnectionsTest {

    @Test
    void answersAreHandledOnAFewReusedThreadsNotOnANewThreadPerRequest() throws Exception {
        TierlogClient client = TestService.shared().adminClient();
        String topic = TestService.uniqueName("request-threads");
        client.admin().createTopic(topic, 4, null);
        Set<Thread> completing = ConcurrentHashMap.newKeySet();
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        ProducerConfig config = ProducerConfig.defaults().withBatchBytes(4 * 1024).withLinger(Duration.ofMillis(1));
        try (Producer producer = client.producer(config)) {
            for (int i = 0; i < 4_000; i++) {
                CompletableFuture<RecordMetadata> f = producer.send(new ProducerRecord(topic, i % 4, null,
                        new byte[200], null, null));
                f.whenComplete((m, e) -> completing.add(Thread.currentThread()));
                sent.add(f);
            }
            producer.flush();
            CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            long requests = producer.stats().requests();
            assertThat(requests).as("requests sent").isGreaterThanOrEqualTo(100);
            // At most one thread per request in flight, plus the one that sends the next while answering (pump).
            assertThat(completing).as("threads that completed the futures of %d requests", requests)
                    .hasSizeLessThanOrEqualTo(2 * ProducerConfig.DEFAULT_MAX_IN_FLIGHT);
        }
    }

    @Test
    void aConsumerOfEightPartitionsReusesItsConnections() throws Exception {
        TestService service = TestService.shared();
        TierlogClient admin = service.adminClient();
        String topic = TestService.uniqueName("fetch-connections");
        int partitions = 8;
        int perPartition = 2_000;
        admin.admin().createTopic(topic, partitions, null);
        try (Producer producer = admin.producer(ProducerConfig.defaults())) {
            for (int p = 0; p < partitions; p++) {
                for (int i = 0; i < perPartition; i++) {
                    producer.send(new ProducerRecord(topic, p, null, new byte[100], null, null));
                }
            }
            producer.flush();
        }
        try (ConnectionCounter counter = new ConnectionCounter(service.port())) {
            TierlogClient client = TierlogClient.builder().url("http://127.0.0.1:" + counter.port())
                    .token(TestService.ADMIN_TOKEN).build();
            // 500 records per fetch (the smallest the consumer asks for): at least 32 fetches over 8 connections.
            try (Consumer consumer = client.consumer(ConsumerConfig.defaults().withMaxPollRecords(100))) {
                List<TopicPartition> tps = new ArrayList<>();
                for (int p = 0; p < partitions; p++) {
                    tps.add(new TopicPartition(topic, p));
                }
                consumer.assign(tps);
                tps.forEach(tp -> consumer.seek(tp, 0));
                int before = counter.accepted.get(); // the seeks' offset look-ups
                int got = 0;
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                while (got < partitions * perPartition) {
                    assertThat(System.nanoTime()).as("read to the end in time (%d read)", got).isLessThan(deadline);
                    got += consumer.poll(Duration.ofSeconds(5)).size();
                }
                assertThat(counter.accepted.get() - before)
                        .as("connections opened for at least 32 fetches of 8 partitions")
                        .isLessThanOrEqualTo(2 * partitions);
            }
        }
    }

    /** A TCP relay to the service on 127.0.0.1 that counts the connections it accepted. */
    static final class ConnectionCounter implements AutoCloseable {
        final AtomicInteger accepted = new AtomicInteger();
        private final ServerSocket server;
        private final int target;
        private final List<Socket> sockets = new ArrayList<>();

        ConnectionCounter(int target) throws IOException {
            this.target = target;
            this.server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
            Thread acceptor = new Thread(this::acceptLoop, "connection-counter");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return server.getLocalPort();
        }

        private void acceptLoop() {
            try {
                while (true) {
                    Socket in = server.accept();
                    accepted.incrementAndGet();
                    Socket out = new Socket(InetAddress.getLoopbackAddress(), target);
                    synchronized (sockets) {
                        sockets.add(in);
                        sockets.add(out);
                    }
                    pipe(in, out);
                    pipe(out, in);
                }
            } catch (IOException closed) {
                // the counter was closed
            }
        }

        private static void pipe(Socket from, Socket to) {
            Thread t = new Thread(() -> {
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    in.transferTo(out);
                } catch (IOException ended) {
                    // one side closed
                } finally {
                    try {
                        to.shutdownOutput();
                    } catch (IOException alreadyClosed) {
                        // nothing to pass on
                    }
                }
            }, "connection-counter-pipe");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void close() throws IOException {
            server.close();
            synchronized (sockets) {
                for (Socket s : sockets) {
                    s.close();
                }
            }
        }
    }
}
