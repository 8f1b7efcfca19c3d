package io.tierlog.service;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Starts a JVM on this test run's classpath, bounded in time; output goes to a file for diagnosis. */
final class JavaProcess {
    private JavaProcess() {
    }

    static Process start(Class<?> main, Path log, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx128m");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    static void awaitSuccess(Process p, long seconds, Path log) throws Exception {
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("process did not finish in " + seconds + " s; log " + log);
        }
        if (p.exitValue() != 0) {
            throw new AssertionError("process exited " + p.exitValue() + ": " + java.nio.file.Files.readString(log));
        }
    }

    static String classpathSeparator() {
        return File.pathSeparator;
    }
}
