package io.tierlog.bench.append;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Runs a command to completion and returns its output (small outputs only: both streams are read fully). */
final class Shell {
    record Output(int exitCode, String stdout, String stderr) {
    }

    private Shell() {
    }

    static Output run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).start();
            p.getOutputStream().close();
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return new Output(p.waitFor(), out, err);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + command, e);
        }
    }
}
