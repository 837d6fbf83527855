package io.homa.bench.load;

import java.util.Arrays;

/** Dispatch of the load commands from {@code io.homa.bench.Main}. */
public final class LoadCommands {
    private LoadCommands() {
    }

    /** Runs a load command directly: {@code java -cp ... io.homa.bench.load.LoadCommands load-node ...}. */
    public static void main(String[] args) {
        if (!handles(args)) {
            System.err.print("Usage:\n" + usage());
            System.exit(2);
        }
        System.exit(execute(args));
    }

    /** Whether {@code args} names a load command. */
    public static boolean handles(String[] args) {
        return args.length > 0 && switch (args[0]) {
            case "load-node", "load-server", "load-client", "load-report" -> true;
            default -> false;
        };
    }

    /** Runs the load command {@code args[0]}; returns the exit code. */
    public static int execute(String[] args) {
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (args[0].equals("load-report")) {
            return LoadReportCommand.execute(rest);
        }
        return LoadNodeCommand.execute(args[0], rest);
    }

    public static String usage() {
        return """
                  java -jar homa-bench.jar load-node --protocol homa|tcp --bind ADDR:PORT --servers a:p,b:p,... \\
                      [--workload w4|fixed:N] [--gbps X] [--duration 30s] [--one-way] [--truncate BYTES] \\
                      [--link-gbps 1] [--base-rtt-us U] [--own-base-rtt-us U] [--start-at EPOCH_MS | --start-file FILE] --out FILE.json
                      Workload load generator (server + open-loop Poisson client in one JVM; load-server and
                      load-client run one side; --calibrate N measures the unloaded RTT of the smallest message).
                  java -jar homa-bench.jar load-report --homa DIR|FILES --tcp DIR|FILES --out DIR
                      Merges per-node results: DIR/report.json, report.md and slowdown.svg.
                  java -jar homa-bench.jar load-report --runs RUN1,RUN2,RUN3 --out DIR
                      The min-max of each figure over several scripts/experiment runs: DIR/runs.md, runs.json.
                """;
    }
}
