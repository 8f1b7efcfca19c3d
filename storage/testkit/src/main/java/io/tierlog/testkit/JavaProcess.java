package io.tierlog.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Starts a class's {@code main} in a new JVM on this JVM's classpath (the test classpath under Surefire), so tests
 * run real writer processes: separate address spaces, separate file locks, a real SIGKILL.
 */
public final class JavaProcess {
    private JavaProcess() {
    }

    /** Starts {@code mainClass}; stdin and stdout are pipes to the caller, stderr is appended to {@code stderr}. */
    public static Process start(Class<?> mainClass, Path stderr, String... args) {
        return start(new ProcessBuilder(command(mainClass, args))
                .redirectError(ProcessBuilder.Redirect.appendTo(stderr.toFile())), mainClass);
    }

    /** Starts {@code mainClass} with stdout and stderr both written to {@code log}, for diagnosis on failure. */
    public static Process startLogged(Class<?> mainClass, Path log, String... args) {
        return start(new ProcessBuilder(command(mainClass, args)).redirectErrorStream(true)
                .redirectOutput(log.toFile()), mainClass);
    }

    /** Waits for a clean exit; kills the process and fails, showing its log, otherwise. */
    public static void awaitSuccess(Process p, long seconds, Path log) throws Exception {
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("process did not finish in " + seconds + " s; log " + log);
        }
        if (p.exitValue() != 0) {
            throw new AssertionError("process exited " + p.exitValue() + ": " + Files.readString(log));
        }
    }

    private static List<String> command(Class<?> mainClass, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // Small heaps and no JIT tiers beyond C1 keep several concurrent JVMs light on a 2-core machine.
        command.add("-Xmx128m");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(List.of(args));
        return command;
    }

    private static Process start(ProcessBuilder builder, Class<?> mainClass) {
        try {
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + mainClass.getName(), e);
        }
    }
}
