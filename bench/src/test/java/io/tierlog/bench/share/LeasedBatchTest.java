package io.tierlog.bench.share;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The bench's streaming reading of lease and acks answers, against a Jackson tree of the same bytes. */
class LeasedBatchTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    // Fields in the service's order (lease, partition, deliveryCount, then the record as a fetch renders it), with a
    // JSON string value, a base64 value named after it, an object value, a null value, a key and headers.
    private static final String ANSWER = """
            {"records":[\
            {"lease":"djF8ZzF8dHwwfDQyfDF8MQ","partition":0,"deliveryCount":1,"offset":42,"timestamp":1732867200000,\
            "key":"user-1","value":"abc","headers":{"h":"v"}},\
            {"lease":"djF8ZzF8dHwzfDd8MXwy","partition":3,"deliveryCount":2,"offset":7,"timestamp":1,"key":null,\
            "value":"AAEC/w==","valueEncoding":"base64","headers":{}},\
            {"lease":"djF8ZzF8dHwzfDh8MXwx","partition":3,"deliveryCount":1,"offset":8,"timestamp":1,"key":null,\
            "value":{"a":[1,{"b":"}"}]},"headers":{}},\
            {"lease":"djF8ZzF8dHwzfDl8MXwx","partition":3,"deliveryCount":1,"offset":9,"timestamp":1,"key":null,\
            "value":null,"headers":{}}]}""";

    @Test
    void readsLeasesPartitionsOffsetsAndValuesAsATreeDoes() throws Exception {
        byte[] bytes = ANSWER.getBytes(StandardCharsets.UTF_8);
        LeasedBatch batch = LeasedBatch.read(bytes);
        JsonNode tree = JSON.readTree(bytes).get("records");
        assertThat(batch.size()).isEqualTo(tree.size()).isEqualTo(4);
        for (int i = 0; i < tree.size(); i++) {
            assertThat(batch.leases().get(i)).isEqualTo(tree.get(i).get("lease").asText());
            assertThat(batch.partitions()[i]).isEqualTo(tree.get(i).get("partition").asLong());
            assertThat(batch.offsets()[i]).isEqualTo(tree.get(i).get("offset").asLong());
        }
        // The values' stored bytes: "abc" is 5 bytes of JSON text, base64 "AAEC/w==" 4 bytes decoded, the object's
        // text 19 bytes; null has none.
        assertThat(batch.valueBytes()).isEqualTo(5 + 4 + "{\"a\":[1,{\"b\":\"}\"}]}".length());
    }

    @Test
    void valuesAreCopiedAsTheirJsonTextWhateverTheSpacing() {
        String spaced = "{ \"records\" : [ { \"lease\" : \"a\" , \"value\" : \"x\\\"y\" ,\n \"partition\" : 1 , "
                + "\"offset\" : 2 } , {\"lease\":\"b\",\"partition\":1,\"offset\":3,\"value\" : [1, 2] } ] }";
        LeasedBatch batch = LeasedBatch.read(spaced.getBytes(StandardCharsets.UTF_8));
        assertThat(batch.leases()).containsExactly("a", "b");
        assertThat(batch.valueBytes()).isEqualTo("\"x\\\"y\"".length() + "[1, 2]".length());
    }

    @Test
    void anEmptyLeaseIsEmpty() {
        assertThat(LeasedBatch.read("{\"records\":[]}".getBytes(StandardCharsets.UTF_8)).isEmpty()).isTrue();
    }

    @Test
    void anAnswerOfAnotherShapeFailsNamingIt() {
        assertThatThrownBy(() -> LeasedBatch.read("{\"type\":\"bad-request\"}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("without records");
        assertThatThrownBy(() -> LeasedBatch.read("{\"records\":[{\"partition\":0,\"offset\":1}]}"
                .getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("without lease");
        assertThatThrownBy(() -> LeasedBatch.read("{\"records\":[".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("not JSON");
    }

    @Test
    void acceptAllIsTheAcksBodyOfApiMd() throws Exception {
        LeasedBatch batch = LeasedBatch.read(ANSWER.getBytes(StandardCharsets.UTF_8));
        JsonNode acks = JSON.readTree(batch.acceptAll());
        assertThat(acks.size()).isEqualTo(1);
        assertThat(acks.get("acks")).hasSize(4);
        for (int i = 0; i < 4; i++) {
            assertThat(acks.get("acks").get(i).get("lease").asText()).isEqualTo(batch.leases().get(i));
            assertThat(acks.get("acks").get(i).get("type").asText()).isEqualTo("accept");
            assertThat(acks.get("acks").get(i).size()).isEqualTo(2);
        }
    }

    @Test
    void aLeaseStringThatWouldNeedEscapingIsRefused() {
        LeasedBatch batch = new LeasedBatch(List.of("a\"b"), new long[] {0}, new long[] {0}, 0);
        assertThatThrownBy(batch::acceptAll).isInstanceOf(IllegalStateException.class).hasMessageContaining("escaping");
    }

    @Test
    void everyAcceptMustHaveTakenEffect() {
        LeasedBatch batch = new LeasedBatch(List.of("a", "b"), new long[] {0, 0}, new long[] {1, 2}, 0);
        assertThat(batch.requireAllAccepted(bytes("{\"results\":[{\"lease\":\"a\",\"ok\":true},"
                + "{\"lease\":\"b\",\"ok\":true}]}"))).isEqualTo(2);
        assertThatThrownBy(() -> batch.requireAllAccepted(bytes("{\"results\":[{\"lease\":\"a\",\"ok\":true},"
                + "{\"lease\":\"b\",\"ok\":false,\"error\":\"lease-expired\"}]}")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("lease b").hasMessageContaining("lease-expired");
        assertThatThrownBy(() -> batch.requireAllAccepted(bytes("{\"results\":[{\"lease\":\"a\",\"ok\":true}]}")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("1 results for 2 acks");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
