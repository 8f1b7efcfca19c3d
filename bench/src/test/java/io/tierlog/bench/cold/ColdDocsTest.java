package io.tierlog.bench.cold;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ColdDocsTest {

    @Test
    void replacesOnlyItsOwnBlock() {
        String doc = "# Benchmarks\n\n## Other\n\nother numbers\n\n" + ColdDocs.SECTION.heading() + "\n\nintro\n\n"
                + ColdDocs.SECTION.begin() + "\nold table\n" + ColdDocs.SECTION.end() + "\n\nin-process numbers\n";

        String updated = ColdDocs.SECTION.replace(doc, "new table\n");

        assertThat(updated).contains("other numbers", "intro", "in-process numbers", "new table")
                .doesNotContain("old table");
        assertThat(ColdDocs.SECTION.replace(updated, "new table")).isEqualTo(updated);
    }

    @Test
    void putsTheBlockUnderTheHeadingOrAppendsOne() {
        String under = ColdDocs.SECTION.replace("# B\n\n" + ColdDocs.SECTION.heading() + "\n\ntext\n", "table");
        assertThat(under).startsWith("# B\n\n" + ColdDocs.SECTION.heading() + "\n\n" + ColdDocs.SECTION.begin() + "\ntable\n" + ColdDocs.SECTION.end())
                .endsWith("text\n");

        String appended = ColdDocs.SECTION.replace("# B\n\n## Append\n\nx", "table");
        assertThat(appended).startsWith("# B\n\n## Append\n\nx\n\n" + ColdDocs.SECTION.heading() + "\n\n" + ColdDocs.SECTION.begin());
    }
}
