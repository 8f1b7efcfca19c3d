package io.tierlog.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** A plain text table with columns as wide as their widest cell. */
final class Table {
    private final List<String[]> rows = new ArrayList<>();

    Table(String... header) {
        rows.add(header);
    }

    void row(Object... cells) {
        String[] r = new String[cells.length];
        for (int i = 0; i < cells.length; i++) {
            r[i] = String.valueOf(cells[i]);
        }
        rows.add(r);
    }

    void print(PrintWriter out) {
        int[] width = new int[rows.get(0).length];
        rows.forEach(r -> {
            for (int i = 0; i < r.length; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        });
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                line.append(i == r.length - 1 ? r[i] : String.format("%-" + (width[i] + 2) + "s", r[i]));
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
