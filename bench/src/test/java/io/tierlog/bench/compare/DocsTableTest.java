package io.tierlog.bench.compare;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DocsTableTest {

    @Test
    void replacesOnlyTheBlockBetweenTheMarkersAndKeepsOtherSections() {
        String doc = "# Benchmarks\n\n## Append\n\nappend numbers\n\n## Tierlog vs Kafka\n\nintro\n\n"
                + DocsTable.BEGIN + "\nold table\n" + DocsTable.END + "\n\n## HTTP load\n\nhttp numbers\n";

        String updated = DocsTable.replace(doc, "new table\n");

        assertThat(updated).contains("append numbers", "intro", "http numbers", "new table")
                .doesNotContain("old table");
        assertThat(updated.indexOf("new table")).isBetween(updated.indexOf(DocsTable.BEGIN), updated.indexOf(DocsTable.END));
        assertThat(DocsTable.replace(updated, "new table")).isEqualTo(updated);
    }

    @Test
    void appendsTheSectionWithHeadingWhenTheFileHasNone() {
        String updated = DocsTable.replace("# Benchmarks\n\n## Append\n\nx\n", "table");

        assertThat(updated).startsWith("# Benchmarks\n\n## Append\n\nx\n\n## Tierlog vs Kafka\n");
        assertThat(updated).contains(DocsTable.BEGIN + "\ntable\n" + DocsTable.END);
    }

    @Test
    void createsTheDocumentWhenEmpty() {
        assertThat(DocsTable.replace("", "table")).startsWith("# Benchmarks\n").contains("## Tierlog vs Kafka", "table");
    }

    @Test
    void putsTheBlockUnderAnExistingHeadingWithoutMarkers() {
        String updated = DocsTable.replace("# B\n\n## Tierlog vs Kafka\nhand-written\n", "table");

        assertThat(updated).isEqualTo("# B\n\n## Tierlog vs Kafka\n\n" + DocsTable.BEGIN + "\ntable\n" + DocsTable.END
                + "\nhand-written\n");
    }
}
