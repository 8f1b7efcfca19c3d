package io.tierlog.client;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The producer's streaming read of produce answers: the first offset, the count, the duplicate flag. */
class ProduceAnswerTest {
    static ProduceAnswer parse(String json) throws IOException {
        return ProduceAnswer.parse(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void readsTheFirstOffsetTheCountAndTheDuplicateFlagAndSkipsWhatItDoesNotKnow() throws Exception {
        assertThat(parse("{\"offsets\":[{\"partition\":3,\"offset\":41},{\"partition\":3,\"offset\":42}],"
                + "\"duplicate\":false}")).isEqualTo(new ProduceAnswer(41, 2, false));
        assertThat(parse("{\"future\":{\"a\":[1,{\"b\":2}]},\"duplicate\":true,\"offsets\":[{\"extra\":[{}],"
                + "\"offset\":7,\"partition\":0,\"more\":{\"offset\":99}}],\"tail\":[]}"))
                .isEqualTo(new ProduceAnswer(7, 1, true));
    }

    @Test
    void anAnswerWithoutOffsetsIsRefused() {
        assertThatThrownBy(() -> parse("{\"duplicate\":false}")).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> parse("{\"offsets\":[]}")).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> parse("[1]")).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> parse("not json")).isInstanceOf(IOException.class);
    }
}
