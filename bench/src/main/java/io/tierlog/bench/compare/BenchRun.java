package io.tierlog.bench.compare;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;

/**
 * What a side-by-side benchmark command starts from: the checkout, an emptied work directory, its own copy of the
 * packaged service (so a rebuild during the run does not change what is measured), and the facts its report heads
 * with (start time, git description, machine).
 */
public record BenchRun(Path repo, Path workDir, Path runJar, Instant started, String git, Map<String, String> machine) {

    /** Empties {@code work} (relative to the checkout) and copies the service application {@code app} into it. */
    public static BenchRun prepare(Path work, Path app) throws IOException {
        Path repo = Workspace.findRepo();
        Path workDir = repo.resolve(work).toAbsolutePath();
        Workspace.deleteTree(workDir);
        Files.createDirectories(workDir);
        Path runJar = Workspace.copyApp(repo.resolve(app), workDir.resolve("app"));
        return new BenchRun(repo, workDir, runJar, Instant.now(), Workspace.gitDescribe(repo),
                MachineInfo.describe(workDir));
    }
}
