package io.tierlog.ingest.function.harness;

import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * One function instance started as Lambda's managed Java runtime starts it: the deployment package (the shaded
 * jar) unpacked into a task root that is the working directory, and a JVM running the runtime interface client's
 * {@code com.amazonaws.services.lambda.runtime.api.client.AWSLambda} with the handler string, the runtime's own
 * libraries (RIC, aws-lambda-java-core, -serialization) on the class path, the Lambda environment variables, and
 * the java17 runtime's JIT settings. The RIC loads the handler from the task root in its customer class loader.
 * Output goes to a log file. {@link #close} kills the process (the RIC loop never ends by itself).
 */
public final class RicFunctionProcess implements Closeable {
    public static final String HANDLER = "io.tierlog.ingest.function.ApiGatewayIngestHandler::handleRequest";

    private final Process process;
    private final Path log;
    private final long startedNanos;

    private RicFunctionProcess(Process process, Path log, long startedNanos) {
        this.process = process;
        this.log = log;
        this.startedNanos = startedNanos;
    }

    /** Unpacks {@code jar} into {@code taskRoot} (replacing it), as Lambda unpacks a deployment package. */
    public static Path unpack(Path jar, Path taskRoot) throws IOException {
        if (Files.exists(taskRoot)) {
            try (var walk = Files.walk(taskRoot)) {
                for (Path p : walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                    Files.delete(p);
                }
            }
        }
        Files.createDirectories(taskRoot);
        try (ZipInputStream zip = new ZipInputStream(Files.newInputStream(jar))) {
            ZipEntry e;
            while ((e = zip.getNextEntry()) != null) {
                Path target = taskRoot.resolve(e.getName()).normalize();
                if (!target.startsWith(taskRoot)) {
                    throw new IOException("entry escapes the task root: " + e.getName());
                }
                if (e.isDirectory()) {
                    Files.createDirectories(target);
                } else {
                    Files.createDirectories(target.getParent());
                    Files.copy(zip, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        return taskRoot;
    }

    /**
     * One class from each of the runtime's own libraries: the RIC, aws-lambda-java-core, -serialization, and the
     * RIC's dependencies utils-lite and the AWS SDK annotations. Named as strings so that a missing library is
     * reported by name rather than failing class loading of this harness.
     */
    private static final List<String> RUNTIME_CLASSES = List.of(
            "com.amazonaws.services.lambda.runtime.api.client.AWSLambda",
            "com.amazonaws.services.lambda.runtime.Context",
            "com.amazonaws.services.lambda.runtime.serialization.events.LambdaEventSerializers",
            "software.amazon.awssdk.utilslite.SdkInternalThreadLocal",
            "software.amazon.awssdk.annotations.SdkProtectedApi");

    /**
     * The runtime's own libraries, located by where this JVM loaded them from. Not from {@code java.class.path}:
     * under {@code java -jar} (the bench module's runnable jar, whose manifest lists its libraries) that property
     * names only the one jar.
     */
    public static String runtimeClassPath() {
        List<String> jars = new ArrayList<>();
        for (String name : RUNTIME_CLASSES) {
            try {
                Class<?> c = Class.forName(name, false, RicFunctionProcess.class.getClassLoader());
                java.security.CodeSource source = c.getProtectionDomain().getCodeSource();
                if (source == null) {
                    throw new IllegalStateException("no jar location for " + name);
                }
                jars.add(Path.of(source.getLocation().toURI()).toString());
            } catch (ClassNotFoundException | java.net.URISyntaxException e) {
                throw new IllegalStateException("the Lambda runtime library holding " + name
                        + " is not on this JVM's class path", e);
            }
        }
        return jars.stream().distinct().collect(Collectors.joining(File.pathSeparator));
    }

    /**
     * The RIC's JNI library, unpacked once next to the task root. Left to itself, the RIC unpacks it to the fixed
     * path /tmp/.libaws-lambda-jni.so at every start, which is fine in a Lambda sandbox (one runtime) and a race
     * between several runtimes on one host; its {@code ...NativeClient.JNI} property names a ready library instead.
     */
    static synchronized Path nativeLibrary(Path dir) throws IOException {
        String arch = System.getProperty("os.arch").equals("aarch64") ? "linux-aarch_64" : "linux-x86_64";
        Path lib = dir.resolve("libaws-lambda-jni." + arch + ".so");
        if (!Files.exists(lib)) {
            Files.createDirectories(dir);
            try (InputStream in = RicFunctionProcess.class.getResourceAsStream("/jni/libaws-lambda-jni." + arch + ".so")) {
                if (in == null) {
                    throw new IOException("the runtime interface client jar has no JNI library for " + arch);
                }
                Path tmp = Files.createTempFile(dir, "jni", ".tmp");
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                Files.move(tmp, lib, StandardCopyOption.ATOMIC_MOVE);
            }
        }
        return lib;
    }

    public static RicFunctionProcess start(Path taskRoot, String runtimeApi, Map<String, String> functionEnv, Path log)
            throws IOException {
        Path jni = nativeLibrary(taskRoot.toAbsolutePath().getParent().resolve("runtime-lib"));
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // The java17 managed runtime's defaults: C1 only, serial GC; heap kept small for a shared machine.
                "-XX:+TieredCompilation", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xmx256m",
                "-Dcom.amazonaws.services.lambda.runtime.api.client.runtimeapi.NativeClient.JNI=" + jni,
                "-cp", runtimeClassPath(),
                "com.amazonaws.services.lambda.runtime.api.client.AWSLambda", HANDLER));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(taskRoot.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(k -> k.startsWith("TIERLOG_") || k.startsWith("AWS_") || k.startsWith("JAVA_TOOL"));
        env.put("AWS_LAMBDA_RUNTIME_API", runtimeApi);
        env.put("_HANDLER", HANDLER);
        env.put("LAMBDA_TASK_ROOT", taskRoot.toString());
        env.put("LAMBDA_RUNTIME_DIR", taskRoot.toString());
        env.put("AWS_EXECUTION_ENV", "AWS_Lambda_java17");
        env.put("AWS_LAMBDA_FUNCTION_NAME", "tierlog-ingest");
        env.put("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST");
        env.put("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024");
        env.put("AWS_LAMBDA_LOG_GROUP_NAME", "/aws/lambda/tierlog-ingest");
        env.put("AWS_LAMBDA_LOG_STREAM_NAME", "2025/03/12/[$LATEST]" + Long.toHexString(System.nanoTime()));
        env.put("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand");
        env.put("AWS_REGION", "eu-west-1");
        env.put("TZ", ":UTC");
        env.putAll(functionEnv);
        long started = System.nanoTime();
        return new RicFunctionProcess(pb.start(), log, started);
    }

    /** {@link System#nanoTime()} just before the JVM was launched. */
    public long startedNanos() {
        return startedNanos;
    }

    public Path log() {
        return log;
    }

    /** CPU time (user + system, all threads) the process has used so far, or -1 if the OS does not say. */
    public double cpuMillis() {
        return process.info().totalCpuDuration().map(d -> d.toNanos() / 1e6).orElse(-1.0);
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public String logText() throws IOException {
        try (InputStream in = Files.newInputStream(log)) {
            return new String(in.readAllBytes());
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
