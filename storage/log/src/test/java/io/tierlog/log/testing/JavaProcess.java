package io.tierlog.log.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts a class's {@code main} in a new JVM on this JVM's classpath (the test classpath under Surefire), so
 * tests can run real writer processes: separate address spaces, separate file locks, real SIGKILL.
 */
public final class JavaProcess {
    private JavaProcess() {
    }

    /** Starts {@code mainClass} with {@code args}; stdin and stdout are pipes, stderr goes to {@code stderr}. */
    public static Process start(Class<?> mainClass, Path stderr, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // Small heaps and no JIT tiers beyond C1 keep four concurrent JVMs light on a 2-core machine.
        command.add("-Xmx128m");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(List.of(args));
        try {
            return new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.appendTo(stderr.toFile()))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + mainClass.getName(), e);
        }
    }
}
