package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The listener's framing over raw sockets: an oversize or garbage frame closes only its own connection, an API or
 * version the listener lacks is answered with UNSUPPORTED_VERSION on a connection that stays open.
 */
@QuarkusTest
class KafkaFramingTest {
    @Inject
    KafkaListener listener;
    @Inject
    io.tierlog.service.PooledDirectMemory directMemory;

    private Socket connect() throws IOException {
        Socket s = new Socket("127.0.0.1", listener.port());
        s.setSoTimeout(20_000);
        return s;
    }

    private static void send(Socket s, RequestHeader header, AbstractRequest request) throws IOException {
        ByteBuffer body = request.serializeWithHeader(header);
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeInt(body.remaining());
        out.write(body.array(), body.arrayOffset() + body.position(), body.remaining());
        out.flush();
    }

    private static ByteBuffer receive(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        byte[] frame = new byte[in.readInt()];
        in.readFully(frame);
        return ByteBuffer.wrap(frame);
    }

    private static ApiVersionsResponse apiVersions(Socket s, int correlationId) throws IOException {
        RequestHeader header = new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "raw", correlationId);
        send(s, header, new ApiVersionsRequest.Builder().build((short) 3));
        return (ApiVersionsResponse) AbstractResponse.parseResponse(receive(s), header);
    }

    private static boolean closedByPeer(Socket s) throws IOException {
        try {
            return s.getInputStream().read() == -1;
        } catch (java.net.SocketException reset) {
            return true;
        }
    }

    @Test
    void oversizeFrameClosesOnlyItsConnection() throws Exception {
        try (Socket bystander = connect(); Socket big = connect()) {
            assertThat(apiVersions(bystander, 1).data().errorCode()).isZero();
            DataOutputStream out = new DataOutputStream(big.getOutputStream());
            out.writeInt(200 * 1024 * 1024); // over the 100 MiB default: refused on its size alone
            out.write(new byte[1024]);
            out.flush();
            assertThat(closedByPeer(big)).isTrue();
            assertThat(apiVersions(bystander, 2).data().errorCode()).isZero();
        }
        try (Admin admin = KafkaClients.admin(listener.port())) {
            assertThat(admin.describeCluster().nodes().get()).hasSize(1);
        }
    }

    @Test
    void garbageFrameClosesOnlyItsConnection() throws Exception {
        try (Socket bystander = connect(); Socket garbage = connect()) {
            byte[] junk = new byte[64];
            new Random(42).nextBytes(junk);
            junk[0] = 0x7f; // an API key no Kafka has
            DataOutputStream out = new DataOutputStream(garbage.getOutputStream());
            out.writeInt(junk.length);
            out.write(junk);
            out.flush();
            assertThat(closedByPeer(garbage)).isTrue();
            assertThat(apiVersions(bystander, 1).data().errorCode()).isZero();
        }
        try (Socket truncated = connect()) {
            // A Metadata header whose client id claims more bytes than the frame holds.
            DataOutputStream out = new DataOutputStream(truncated.getOutputStream());
            out.writeInt(12);
            out.writeShort(ApiKeys.METADATA.id);
            out.writeShort(9);
            out.writeInt(5);
            out.writeShort(500);
            out.writeShort(0);
            out.flush();
            assertThat(closedByPeer(truncated)).isTrue();
        }
    }

    @Test
    void unimplementedApisAreAnsweredUnsupportedAndTheConnectionStays() throws Exception {
        try (Socket s = connect()) {
            ApiVersionsResponse versions = apiVersions(s, 1);
            assertThat(versions.data().apiKeys().find(ApiKeys.PRODUCE.id)).isNotNull();
            assertThat(versions.data().apiKeys().find(ApiKeys.ALTER_REPLICA_LOG_DIRS.id)).isNull();
            assertThat(versions.data().apiKeys().find(ApiKeys.ADD_PARTITIONS_TO_TXN.id).maxVersion())
                    .isEqualTo((short) 3);

            // AddPartitionsToTxn v4 (broker to broker) is not offered: answered UNSUPPORTED_VERSION, the connection stays.
            RequestHeader add = new RequestHeader(ApiKeys.ADD_PARTITIONS_TO_TXN, (short) 4, "raw", 2);
            send(s, add, AddPartitionsToTxnRequest.Builder.forBroker(
                    new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection()).build((short) 4));
            AddPartitionsToTxnResponse added = (AddPartitionsToTxnResponse) AbstractResponse.parseResponse(receive(s),
                    add);
            assertThat(Errors.forCode(added.data().errorCode())).isEqualTo(Errors.UNSUPPORTED_VERSION);

            // ApiVersions at a version from the future: answered at version 0 with ours (KIP-511).
            sendRaw(s, ApiKeys.API_VERSIONS, (short) 99, 3, new ApiVersionsRequestData()
                    .setClientSoftwareName("raw").setClientSoftwareVersion("1"));
            ByteBuffer answer = receive(s);
            assertThat(answer.getInt()).isEqualTo(3);
            ApiVersionsResponseData v0 = new ApiVersionsResponseData(new ByteBufferAccessor(answer), (short) 0);
            assertThat(v0.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
            assertThat(v0.apiKeys().find(ApiKeys.API_VERSIONS.id).maxVersion()).isGreaterThanOrEqualTo((short) 3);

            assertThat(apiVersions(s, 4).data().errorCode()).isZero();
        }
    }

    @Test
    void aSlowResponseHoldsBackLaterOnesOnItsConnection() throws Exception {
        String topic = "order-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        io.restassured.RestAssured.given().contentType(io.restassured.http.ContentType.JSON)
                .body("{\"name\":\"" + topic + "\",\"partitions\":1}").post("/v1/topics").then().statusCode(201);
        try (Socket s = connect()) {
            // A fetch at the end of an empty partition waits 5 s; the ApiVersions behind it are ready at once.
            FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(5000).setMinBytes(1)
                    .setMaxBytes(1 << 20).setTopics(java.util.List.of(new FetchRequestData.FetchTopic().setTopic(topic)
                            .setPartitions(java.util.List.of(new FetchRequestData.FetchPartition().setPartition(0)
                                    .setFetchOffset(0).setPartitionMaxBytes(1 << 20)))));
            long start = System.nanoTime();
            sendRaw(s, ApiKeys.FETCH, (short) 12, 100, fetch);
            for (int i = 1; i <= 40; i++) {
                // More than the in-flight limit: reading pauses, then resumes as answers go out.
                send(s, new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "raw", 100 + i),
                        new ApiVersionsRequest.Builder().build((short) 3));
            }
            for (int i = 0; i <= 40; i++) {
                ByteBuffer frame = receive(s);
                assertThat(frame.getInt(0)).isEqualTo(100 + i);
                if (i == 0) {
                    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofMillis(4900));
                }
            }
        }
    }

    @Test
    void producesCutIntoSingleBytesOrPackedInOneWriteAreAppendedWholeAndTheirMemoryReturns() throws Exception {
        String topic = KafkaListenerTest.unique("framing");
        io.restassured.RestAssured.given().contentType(io.restassured.http.ContentType.JSON)
                .body("{\"name\":\"" + topic + "\",\"partitions\":1}").post("/v1/topics").then().statusCode(201);
        int requests = 10;
        int perRequest = 3;
        try (Socket s = connect()) {
            s.setTcpNoDelay(true);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            java.io.ByteArrayOutputStream packed = new java.io.ByteArrayOutputStream();
            for (int i = 0; i < requests; i++) {
                org.apache.kafka.common.record.internal.SimpleRecord[] records =
                        new org.apache.kafka.common.record.internal.SimpleRecord[perRequest];
                for (int j = 0; j < perRequest; j++) {
                    records[j] = new org.apache.kafka.common.record.internal.SimpleRecord(System.currentTimeMillis(),
                            null, ("{\"n\":" + (i * perRequest + j) + "}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
                }
                org.apache.kafka.common.message.ProduceRequestData.TopicProduceDataCollection topics =
                        new org.apache.kafka.common.message.ProduceRequestData.TopicProduceDataCollection();
                topics.add(new org.apache.kafka.common.message.ProduceRequestData.TopicProduceData().setName(topic)
                        .setPartitionData(java.util.List.of(new org.apache.kafka.common.message.ProduceRequestData
                                .PartitionProduceData().setIndex(0).setRecords(
                                        org.apache.kafka.common.record.internal.MemoryRecords.withRecords(
                                                org.apache.kafka.common.compress.Compression.NONE, records)))));
                AbstractRequest produce = org.apache.kafka.common.requests.ProduceRequest.builder(
                        new org.apache.kafka.common.message.ProduceRequestData().setAcks((short) -1)
                                .setTimeoutMs(20_000).setTopicData(topics)).build((short) 12);
                ByteBuffer body = produce.serializeWithHeader(new RequestHeader(ApiKeys.PRODUCE, (short) 12, "raw", i + 1));
                byte[] frame = ByteBuffer.allocate(4 + body.remaining()).putInt(body.remaining()).put(body).array();
                if (i < requests / 2) {
                    // Every byte its own TCP segment: sizes and bodies arrive cut at every point.
                    for (byte b : frame) {
                        out.write(b);
                        out.flush();
                    }
                } else {
                    packed.writeBytes(frame);
                }
            }
            out.write(packed.toByteArray()); // the rest: many frames in one read
            out.flush();
            for (int i = 0; i < requests; i++) {
                ByteBuffer answer = receive(s);
                assertThat(answer.getInt(0)).isEqualTo(i + 1);
                org.apache.kafka.common.requests.ProduceResponse r = (org.apache.kafka.common.requests.ProduceResponse)
                        AbstractResponse.parseResponse(answer, new RequestHeader(ApiKeys.PRODUCE, (short) 12, "raw", i + 1));
                org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse p =
                        r.data().responses().iterator().next().partitionResponses().get(0);
                assertThat(p.errorCode()).isZero();
                assertThat(p.baseOffset()).isEqualTo((long) i * perRequest);
            }
        }
        java.util.List<Number> values = io.restassured.RestAssured.given()
                .get("/v1/topics/" + topic + "/partitions/0/records?offset=0&maxRecords=100")
                .then().statusCode(200).extract().jsonPath().getList("records.value.n", Number.class);
        assertThat(values.stream().map(Number::intValue).toList())
                .isEqualTo(java.util.stream.IntStream.range(0, requests * perRequest).boxed().toList());
        // Every request block and every answer's memory is given back once the answers are written.
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (directMemory.heldBytes() != 0) {
            assertThat(System.nanoTime()).as("pooled memory still held: %d bytes", directMemory.heldBytes())
                    .isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    /** A request frame written from the message classes directly (for versions the request builders refuse). */
    private static void sendRaw(Socket s, ApiKeys api, short version, int correlationId, ApiMessage body)
            throws IOException {
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(api.id).setRequestApiVersion(version)
                .setClientId("raw").setCorrelationId(correlationId);
        short headerVersion = api.requestHeaderVersion(version);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer frame = ByteBuffer.allocate(header.size(cache, headerVersion) + body.size(cache, version));
        ByteBufferAccessor w = new ByteBufferAccessor(frame);
        header.write(w, cache, headerVersion);
        body.write(w, cache, version);
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeInt(frame.capacity());
        out.write(frame.array());
        out.flush();
    }
}
