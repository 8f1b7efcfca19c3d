package io.tierlog.http;

import io.tierlog.log.ErrorType;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ServerErrorDetailTest {
    @Test
    void absoluteRelativeAndWindowsPathsAndObjectKeysAreReplaced() {
        assertThat(ServerErrorDetail.withoutPaths("cannot open partition t-0 in /var/lib/tierlog/hot/t-0"))
                .isEqualTo("cannot open partition t-0 in <path>");
        assertThat(ServerErrorDetail.withoutPaths("cannot write target/test-data/hot/__metadata/topics/.tmp-x: "
                + "File name too long")).isEqualTo("cannot write <path>: File name too long");
        assertThat(ServerErrorDetail.withoutPaths("read 'orders/0/manifest/00000000000000000001.json' failed"))
                .isEqualTo("read '<path>' failed");
        assertThat(ServerErrorDetail.withoutPaths("(C:\\data\\hot\\t-0) gone")).isEqualTo("(<path>) gone");
        assertThat(ServerErrorDetail.withoutPaths("cold tier at http://127.0.0.1:9000/bucket unreachable"))
                .isEqualTo("cold tier at <path> unreachable");
    }

    @Test
    void wordsWithoutPathsStay() {
        assertThat(ServerErrorDetail.withoutPaths("Input/output error during I/O on topic t-0"))
                .isEqualTo("Input/output error during I/O on topic t-0");
        assertThat(ServerErrorDetail.withoutPaths("no separator here")).isEqualTo("no separator here");
        assertThat(ServerErrorDetail.withoutPaths(null)).isNull();
    }

    @Test
    void onlyServerErrorsAreRedactedWhenRendered() {
        String server = new String(ProblemJson.render(ErrorType.INTERNAL, "cannot read /srv/hot/t-0/x.log", Map.of()),
                StandardCharsets.UTF_8);
        assertThat(server).contains("cannot read <path>").doesNotContain("/srv");
        String client = new String(ProblemJson.render(ErrorType.BAD_REQUEST, "value must be a/b", Map.of()),
                StandardCharsets.UTF_8);
        assertThat(client).contains("a/b");
    }
}
