package io.tierlog.bench.compare;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DocsTableTest {

    @Test
    void replacesOnlyTheBlockBetweenTheMarkersAndKeepsOtherSections() {
        String doc = "# Benchmarks\n\n## Append\n\nappend numbers\n\n## Tierlog vs Kafka\n\nintro\n\n"
                + DocsTable.SECTION.begin() + "\nold table\n" + DocsTable.SECTION.end() + "\n\n## HTTP load\n\nhttp numbers\n";

        String updated = DocsTable.SECTION.replace(doc, "new table\n");

        assertThat(updated).contains("append numbers", "intro", "http numbers", "new table")
                .doesNotContain("old table");
        assertThat(updated.indexOf("new table")).isBetween(updated.indexOf(DocsTable.SECTION.begin()), updated.indexOf(DocsTable.SECTION.end()));
        assertThat(DocsTable.SECTION.replace(updated, "new table")).isEqualTo(updated);
    }

    @Test
    void appendsTheSectionWithHeadingWhenTheFileHasNone() {
        String updated = DocsTable.SECTION.replace("# Benchmarks\n\n## Append\n\nx\n", "table");

        assertThat(updated).startsWith("# Benchmarks\n\n## Append\n\nx\n\n## Tierlog vs Kafka\n");
        assertThat(updated).contains(DocsTable.SECTION.begin() + "\ntable\n" + DocsTable.SECTION.end());
    }

    @Test
    void createsTheDocumentWhenEmpty() {
        assertThat(DocsTable.SECTION.replace("", "table")).startsWith("# Benchmarks\n").contains("## Tierlog vs Kafka", "table");
    }

    @Test
    void putsTheBlockUnderAnExistingHeadingWithoutMarkers() {
        String updated = DocsTable.SECTION.replace("# B\n\n## Tierlog vs Kafka\nhand-written\n", "table");

        assertThat(updated).isEqualTo("# B\n\n## Tierlog vs Kafka\n\n" + DocsTable.SECTION.begin() + "\ntable\n" + DocsTable.SECTION.end()
                + "\nhand-written\n");
    }
}
