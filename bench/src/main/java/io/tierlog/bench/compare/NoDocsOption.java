package io.tierlog.bench.compare;

import picocli.CommandLine.Option;

/**
 * The {@code --no-docs} option (a picocli mixin) of the commands that regenerate their section of
 * {@code docs/BENCHMARKS.md}, declared once so that its name and help are the same in all of them.
 */
public final class NoDocsOption {
    @Option(names = "--no-docs", description = "Do not rewrite docs/BENCHMARKS.md (results files are still written).")
    boolean noDocs;

    public boolean updateDocs() {
        return !noDocs;
    }
}
