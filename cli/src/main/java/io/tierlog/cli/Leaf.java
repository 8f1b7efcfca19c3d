package io.tierlog.cli;

import io.tierlog.client.TierlogClient;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** A command that does something: reaches the root's global options and the command line's streams. */
abstract class Leaf implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    TierlogCli root() {
        return (TierlogCli) spec.root().userObject();
    }

    TierlogClient client() {
        return root().client();
    }

    boolean json() {
        return root().json();
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }

    @Override
    public Integer call() throws Exception {
        json(); // checks --output before anything is done
        int code = run();
        out().flush();
        return code;
    }

    abstract int run() throws Exception;
}
