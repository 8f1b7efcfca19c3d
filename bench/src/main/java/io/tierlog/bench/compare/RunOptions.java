package io.tierlog.bench.compare;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The options every benchmark command that starts servers shares (a picocli mixin). */
public final class RunOptions {
    @Option(names = "--repo", description = "The Tierlog checkout (default: found from the working directory).")
    Path repo;

    @Option(names = "--work-dir", description = "Where data goes (default: a new temp directory, deleted at the end).")
    Path workDir;

    @Option(names = "--keep", description = "Keep the work directory (logs and data) after the run.")
    boolean keep;

    @Mixin
    NoDocsOption docs;

    public Path repo() {
        return repo != null ? repo : Workspace.findRepo();
    }

    /** The given work directory, or a new temp directory named with {@code prefix}. */
    public Path createWorkDir(String prefix) throws IOException {
        return workDir == null ? Files.createTempDirectory(prefix) : Files.createDirectories(workDir);
    }

    /** Whether the work directory is to be deleted at the end: a temp one, unless --keep. */
    public boolean deleteWorkDir() {
        return workDir == null && !keep;
    }

    public boolean updateDocs() {
        return docs.updateDocs();
    }
}
