package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.tierlog.service.QuotaApiTest;
import io.tierlog.testkit.ManualClock;
import jakarta.inject.Inject;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The byte-rate quotas on the Kafka listener, as Kafka applies them: the request that takes a caller over its rate
 * is served and answered with the throttle time; the connection then reads nothing for that long; a fetch while in
 * debt is answered with no records; and Kafka and HTTP charge one bucket per caller (here the client address,
 * 127.0.0.1, auth mode none). The service's clock is manual, so the debt only shrinks when the test moves it.
 */
@QuarkusTest
@TestProfile(QuotaApiTest.SmallQuotas.class)
class KafkaQuotaTest {
    /** QuotaApiTest's profile (one service for both, started once): 20,000 bytes per second, both quotas. */
    static final int RATE = QuotaApiTest.RATE;

    @Inject
    ManualClock clock;
    @Inject
    KafkaListener listener;

    /** Every bucket full again for whichever quota test runs next on this profile's service. */
    @AfterEach
    void repay() {
        clock.advance(Duration.ofHours(1));
    }

    @Test
    void aProduceOverTheQuotaIsThrottledMutedAndChargedToTheCallersHttpBucketToo() throws Exception {
        String topic = KafkaListenerTest.unique("quota-produce");
        createTopic(topic);
        clock.advance(Duration.ofHours(1)); // every bucket full
        MemoryRecords batch = records(50);
        long expectedMs = (long) Math.ceil((batch.sizeInBytes() - RATE) * 1000.0 / RATE);
        try (RawKafka raw = new RawKafka(listener.port())) {
            ProduceResponse produced = raw.call(produce(topic, batch));
            assertThat(produced.data().responses().iterator().next().partitionResponses().get(0).errorCode())
                    .as("served: a request is never cut for its size").isZero();
            assertThat(produced.throttleTimeMs()).isEqualTo((int) expectedMs);

            long sent = System.nanoTime();
            // Named as every client names itself: an empty software name is INVALID_REQUEST, as with Kafka.
            ApiVersionsResponse next = raw.call(new ApiVersionsRequest(new ApiVersionsRequestData()
                    .setClientSoftwareName("raw").setClientSoftwareVersion("1"), (short) 3));
            assertThat(next.data().errorCode()).isZero();
            assertThat(Duration.ofNanos(System.nanoTime() - sent)).as("the connection was muted for the throttle")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(expectedMs - 50));
        }
        // The same caller over HTTP meets the same debt; once the clock has moved past it, it is admitted.
        String small = "{\"records\":[{\"partition\":0,\"value\":1}]}";
        given().contentType("application/json").body(small).post("/v1/topics/" + topic + "/records")
                .then().statusCode(429);
        clock.advance(Duration.ofMillis(expectedMs + 1));
        given().contentType("application/json").body(small).post("/v1/topics/" + topic + "/records")
                .then().statusCode(200);
    }

    @Test
    void aFetchWhileInDebtIsAnsweredWithNoRecordsAndTheThrottle() throws Exception {
        String topic = KafkaListenerTest.unique("quota-fetch");
        createTopic(topic);
        MemoryRecords batch = records(50);
        try (RawKafka raw = new RawKafka(listener.port())) {
            clock.advance(Duration.ofHours(1));
            raw.call(produce(topic, batch));
            clock.advance(Duration.ofHours(1)); // the produce debt gone, the fetch bucket full

            FetchResponse first = raw.call(fetch(topic));
            long expectedMs = (long) Math.ceil((batch.sizeInBytes() - RATE) * 1000.0 / RATE);
            assertThat(recordBytes(first)).isEqualTo(batch.sizeInBytes());
            assertThat(first.throttleTimeMs()).isEqualTo((int) expectedMs);

            // Still in debt (the clock has not moved): no records, the throttle time, nothing charged.
            FetchResponse throttled = raw.call(fetch(topic));
            assertThat(throttled.data().responses()).isEmpty();
            assertThat(throttled.throttleTimeMs()).isEqualTo((int) expectedMs);

            clock.advance(Duration.ofMillis(expectedMs));
            FetchResponse served = raw.call(fetch(topic));
            assertThat(recordBytes(served)).isEqualTo(batch.sizeInBytes());
        }
        // The Kafka fetches charged this caller's fetch bucket, which HTTP fetches use too.
        given().get("/v1/topics/" + topic + "/partitions/0/records?offset=0&maxRecords=1").then().statusCode(429);
    }

    private static void createTopic(String topic) {
        given().contentType("application/json").body("{\"name\":\"" + topic + "\",\"partitions\":1}")
                .post("/v1/topics").then().statusCode(201);
    }

    /** {@code n} records of 1,000 bytes in one batch (50 of them: about 2.5 s of the quota). */
    static MemoryRecords records(int n) {
        SimpleRecord[] records = new SimpleRecord[n];
        for (int i = 0; i < n; i++) {
            records[i] = new SimpleRecord(1_700_000_000_000L, null, new byte[1000]);
        }
        return MemoryRecords.withRecords(Compression.NONE, records);
    }

    static ProduceRequest produce(String topic, MemoryRecords batch) {
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(batch))));
        return ProduceRequest.builder(new ProduceRequestData().setAcks((short) -1).setTimeoutMs(20_000)
                .setTopicData(topics)).build((short) 12);
    }

    /** A sessionless fetch of partition 0 from offset 0, up to 1 MiB. */
    static FetchRequest fetch(String topic) {
        FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic().setTopic(topic);
        t.partitions().add(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                .setPartitionMaxBytes(1 << 20));
        return new FetchRequest(new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(1)
                .setMaxBytes(1 << 24).setSessionId(0).setSessionEpoch(-1).setTopics(List.of(t)), (short) 12);
    }

    private static long recordBytes(FetchResponse r) {
        long bytes = 0;
        for (FetchResponseData.FetchableTopicResponse t : r.data().responses()) {
            for (FetchResponseData.PartitionData p : t.partitions()) {
                bytes += p.records() == null ? 0 : p.records().sizeInBytes();
            }
        }
        return bytes;
    }
}
