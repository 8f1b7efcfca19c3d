package io.tierlog.bench.compare;

import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * The {@code --app} option (a picocli mixin) of the commands that copy and start the packaged index-service
 * ({@link BenchRun#prepare}), declared once so that its name, default and help are the same in all of them.
 */
public final class PackagedServiceOption {
    @Option(names = "--app", defaultValue = "index-service/target/quarkus-app",
            description = "The packaged index-service (default: ${DEFAULT-VALUE}).")
    Path app;

    /** The packaged index-service's directory; relative paths are against the checkout. */
    public Path path() {
        return app;
    }
}
