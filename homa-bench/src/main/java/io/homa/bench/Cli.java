package io.homa.bench;

import picocli.CommandLine;

import java.io.PrintStream;
import java.io.PrintWriter;

/** What every picocli command of the bench jar does the same way: its echo line and its streams. */
public final class Cli {
    private Cli() {
    }

    /** The command as a user would type it, recorded in the command's JSON output. */
    public static String commandLine(String name, String[] args) {
        return "java -jar homa-bench.jar " + name + (args.length == 0 ? "" : " " + String.join(" ", args));
    }

    /** Runs {@code command} on {@code args} with its output on the given streams; returns the exit code. */
    public static int execute(Object command, String[] args, PrintStream stdout, PrintStream stderr) {
        CommandLine cl = new CommandLine(command);
        cl.setOut(new PrintWriter(stdout, true));
        cl.setErr(new PrintWriter(stderr, true));
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        return cl.execute(args);
    }
}
