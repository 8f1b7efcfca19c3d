package io.tierlog.bench.cold;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ColdDocsTest {

    @Test
    void replacesOnlyItsOwnBlock() {
        String doc = "# Benchmarks\n\n## Other\n\nother numbers\n\n" + ColdDocs.HEADING + "\n\nintro\n\n"
                + ColdDocs.BEGIN + "\nold table\n" + ColdDocs.END + "\n\nin-process numbers\n";

        String updated = ColdDocs.replace(doc, "new table\n");

        assertThat(updated).contains("other numbers", "intro", "in-process numbers", "new table")
                .doesNotContain("old table");
        assertThat(ColdDocs.replace(updated, "new table")).isEqualTo(updated);
    }

    @Test
    void putsTheBlockUnderTheHeadingOrAppendsOne() {
        String under = ColdDocs.replace("# B\n\n" + ColdDocs.HEADING + "\n\ntext\n", "table");
        assertThat(under).startsWith("# B\n\n" + ColdDocs.HEADING + "\n\n" + ColdDocs.BEGIN + "\ntable\n" + ColdDocs.END)
                .endsWith("text\n");

        String appended = ColdDocs.replace("# B\n\n## Append\n\nx", "table");
        assertThat(appended).startsWith("# B\n\n## Append\n\nx\n\n" + ColdDocs.HEADING + "\n\n" + ColdDocs.BEGIN);
    }
}
