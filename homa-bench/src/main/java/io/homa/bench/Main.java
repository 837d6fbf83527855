package io.homa.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The entry point of {@code homa-bench.jar}: {@code compare ...} runs the comparison command,
 * {@code stat ...} samples a running process's Homa sockets;
 * anything else goes to JMH's own command line (a benchmark regex and JMH options, {@code -h} for
 * JMH's help, {@code -l} to list the benchmarks).
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("compare")) {
            System.exit(CompareCommand.execute(Arrays.copyOfRange(args, 1, args.length)));
        }
        if (args.length > 0 && args[0].equals("echo-server")) { // the server JVM of compare --processes 2
            System.exit(ServerProcessCommand.execute(Arrays.copyOfRange(args, 1, args.length), System.in, System.out));
        }
        if (args.length > 0 && args[0].equals("stat")) {
            System.exit(StatCommand.execute(Arrays.copyOfRange(args, 1, args.length)));
        }
        if (args.length > 0 && args[0].equals("simulate")) {
            System.exit(io.homa.bench.sim.SimulateCommand.execute(Arrays.copyOfRange(args, 1, args.length)));
        }
        if (args.length > 0 && args[0].equals("overload")) {
            System.exit(io.homa.bench.overload.OverloadCommand.execute(Arrays.copyOfRange(args, 1, args.length), System.out));
        }
        if (args.length > 0 && args[0].equals("collective")) {
            System.exit(io.homa.bench.collective.CollectiveCommand.execute(Arrays.copyOfRange(args, 1, args.length), System.out));
        }
        if (args.length > 0 && args[0].equals("tcp-bulk")) { // the testbed's bulk flow (scripts/collective-testbed --bulk)
            System.exit(io.homa.bench.collective.BulkTcp.execute(Arrays.copyOfRange(args, 1, args.length), System.out));
        }
        if (args.length > 0 && args[0].equals("overload-server")) { // the server JVM of overload
            System.exit(io.homa.bench.overload.OverloadServer.run(Arrays.copyOfRange(args, 1, args.length), System.in,
                    System.out));
        }
        if (io.homa.bench.load.LoadCommands.handles(args)) {
            System.exit(io.homa.bench.load.LoadCommands.execute(args));
        }
        if (args.length == 0 || args[0].equals("help") || args[0].equals("--help")) {
            System.out.print(usage());
            return;
        }
        org.openjdk.jmh.Main.main(args);
    }

    /**
     * The command that runs this program in a new JVM: {@code prefix} (e.g. {@code ip netns exec
     * NS}), the same Java and class path as this JVM's, {@code jvmArgs}, then {@code args}.
     */
    static List<String> javaCommand(List<String> prefix, List<String> jvmArgs, List<String> args) {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Main.class.getName());
        cmd.addAll(args);
        return cmd;
    }

    static String usage() {
        return """
                Usage:
                  java -jar homa-bench.jar compare [--quick] [--out DIR] [--transports a,b] [--scenarios x,y]
                      Homa vs TCP vs raw UDP on this host: a table, DIR/results.json and DIR/latency.svg.
                      (java -jar homa-bench.jar compare --help for every option; --micrometer attaches the
                      Micrometer binder to every Homa socket, to measure its overhead)
                  java -jar homa-bench.jar stat --pid PID | --jmx HOST:PORT | --url URL [--interval 1s] [--count N]
                      Rates and warnings of the Homa sockets of a running JVM, through JMX (the process
                      registers its sockets: HomaJmx.register, or -Dio.homa.jmx=true); docs/observability.md.
                  java -jar homa-bench.jar simulate --workload w4 --load 0.8 [--hosts 144] [--quick] --out DIR
                      The SIGCOMM 2018 simulation (144 hosts, real engine, virtual time): DIR/results.json;
                      --ablations, --sweep, --tune, --figure for the rest (docs/simulation.md).
                  java -jar homa-bench.jar overload [--handler-ms 1,10,100] [--threads 1,2,16] [--calls 20000]
                      [--clients 8] [--deadline 5s] [--runs 3] [--heap 256m] [--out DIR]
                      A flood of calls on a slow server JVM (default configuration): what succeeds against the
                      handlers' capacity, how the rest fail, a new call after it (docs/security.md).
                  java -jar homa-bench.jar collective [--op allreduce|broadcast|allgather|reducescatter] [--ranks 4]
                      [--transports homa,homa-inline,tcp] [--sizes 8,1K,1M | --min 8 --max 32M] [--sim [--sim-ranks 16,64]] [--out DIR]
                      Collectives over Homa and TCP in nccl-tests' terms (time, algbw, busbw, every result
                      checked): ranks in this JVM on loopback, or the simulated datacenter (docs/collectives.md).
                  java -jar homa-bench.jar tcp-bulk --listen PORT --seconds N | --to HOST:PORT --seconds N
                      One TCP bulk flow, each side printing its Mbit/s (what shares the testbed's links
                      with a collective in scripts/collective-testbed --bulk).
                  java -jar homa-bench.jar <JMH regex> [JMH options]
                      JMH benchmarks, e.g.  java -jar homa-bench.jar UnloadedLatency -f1 -wi 2 -i 3
                      -l lists them, -h shows JMH's options, -prof gc reports allocation per call.
                      (Running every benchmark takes a long time: give a regex, e.g. '.*' deliberately.)
                      The engine's scheduler microbenchmarks (package-private classes) are not here:
                      mvn -B -pl homa-core -am test -Pjmh -DskipTests -Djmh.args="SchedulerBenchmark -f1"
                """ + io.homa.bench.load.LoadCommands.usage();
    }
}
