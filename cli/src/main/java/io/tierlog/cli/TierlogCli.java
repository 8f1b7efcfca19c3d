package io.tierlog.cli;

import io.tierlog.client.ProblemException;
import io.tierlog.client.TierlogClient;
import io.tierlog.client.UnavailableException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

import java.io.PrintWriter;

/**
 * {@code tierlog}: the command-line tool (docs/cli.md). Global options are inherited by every subcommand, so they
 * may come before or after it. Errors print the service's problem ({@code type}, title, detail), never a stack
 * trace, and map to the documented exit codes.
 */
@Command(name = "tierlog", mixinStandardHelpOptions = true, version = "tierlog 0.1.0",
        description = "Work with a Tierlog service: topics, produce, consume, replay, groups, tokens.",
        subcommands = {TopicsCommand.class, ProduceCommand.class, ConsumeCommand.class, ReplayCommand.class,
                GroupsCommand.class, TokensCommand.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
                "0:success",
                "1:the service refused the request (conflict, bad request, ...) or another error",
                "2:usage error (unknown option, missing or malformed argument)",
                "3:not found (topic, partition, group, token)",
                "4:authentication or authorization failed (401, 403)",
                "5:service unavailable (no answer, 503, 429 after retries)"})
public final class TierlogCli implements Runnable {
    public static final int OK = 0;
    public static final int FAILED = 1;
    public static final int USAGE = 2;
    public static final int NOT_FOUND = 3;
    public static final int AUTH = 4;
    public static final int UNAVAILABLE = 5;

    @Option(names = "--url", scope = ScopeType.INHERIT, paramLabel = "URL",
            description = "The service (default: $TIERLOG_URL, else http://localhost:8080).")
    String url;

    @Option(names = "--token", scope = ScopeType.INHERIT, paramLabel = "TOKEN",
            description = "Bearer token (default: $TIERLOG_TOKEN).")
    String token;

    @Option(names = {"-o", "--output"}, scope = ScopeType.INHERIT, paramLabel = "text|json",
            description = "Output for people (text, the default) or scripts (json).")
    String output = "text";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final java.util.Map<String, String> env;
    /** Where {@code produce} reads lines without files; tests give their own. */
    java.io.InputStream stdin = System.in;

    public TierlogCli() {
        this(System.getenv());
    }

    public TierlogCli(java.util.Map<String, String> env) {
        this.env = env;
    }

    /** Reads {@code produce}'s lines from {@code in} instead of the process's stdin. */
    public TierlogCli withStdin(java.io.InputStream in) {
        this.stdin = in;
        return this;
    }

    public static void main(String[] args) {
        System.exit(commandLine(new TierlogCli()).execute(args));
    }

    /** The configured command line: exit-code mapping and error printing (used by tests with their own streams). */
    public static CommandLine commandLine(TierlogCli root) {
        CommandLine cl = new CommandLine(root);
        cl.setExecutionExceptionHandler((e, line, parsed) -> root.fail(line.getErr(), e));
        cl.setExitCodeExceptionMapper(e -> e instanceof CommandLine.ParameterException ? USAGE : FAILED);
        return cl;
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a command is required");
    }

    TierlogClient client() {
        String u = url != null ? url : env.getOrDefault("TIERLOG_URL", "http://localhost:8080");
        String t = token != null ? token : env.get("TIERLOG_TOKEN");
        return TierlogClient.builder().url(u).token(t).build();
    }

    boolean json() {
        if (!output.equals("json") && !output.equals("text")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--output must be text or json: " + output);
        }
        return output.equals("json");
    }

    /** Prints what went wrong (the problem's type, title and detail) and returns its exit code. */
    int fail(PrintWriter err, Exception e) {
        if (e instanceof CommandLine.ParameterException p) {
            err.println("error: " + p.getMessage());
            return USAGE;
        }
        if (e instanceof ProblemException p) {
            if ("json".equals(output)) {
                err.println(p.body().isEmpty() ? Json.write(java.util.Map.of("type", p.type(), "status", p.status(),
                        "detail", p.detail())) : p.body().toString());
            } else {
                err.println("error: " + (p.title().isEmpty() ? "HTTP " + p.status() : p.title()) + " (" + p.type()
                        + ", " + p.status() + ")" + (p.detail().isEmpty() ? "" : ": " + p.detail()));
            }
            return exitCode(p);
        }
        if (e instanceof UnavailableException u) {
            err.println("error: service unavailable: " + u.getMessage());
            return UNAVAILABLE;
        }
        if (e instanceof UsageException u) {
            err.println("error: " + u.getMessage());
            return USAGE;
        }
        err.println("error: " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
        return FAILED;
    }

    static int exitCode(ProblemException p) {
        if (p.status() == 404) {
            return NOT_FOUND;
        }
        if (p.status() == 401 || p.status() == 403) {
            return AUTH;
        }
        if (p.status() == 503 || p.status() == 429) {
            return UNAVAILABLE;
        }
        return FAILED;
    }

    /** A usage problem found after parsing (e.g. two options that exclude each other): exit code 2. */
    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }
}
