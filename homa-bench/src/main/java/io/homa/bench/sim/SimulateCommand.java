package io.homa.bench.sim;

import io.homa.bench.Cli;

import io.homa.bench.Json;
import io.homa.core.EngineConfig;
import io.homa.core.sim.Datacenter;
import io.homa.core.sim.DatacenterTopology;
import io.homa.core.sim.SimAblation;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code simulate}: the SIGCOMM 2018 paper's simulated experiment with this project's engine
 * (docs/simulation.md). One run by default; {@code --ablations}, {@code --sweep}, {@code --tune} and
 * {@code --figure} for the rest. Progress on stderr, tables on stdout, JSON (and SVG) in the output
 * folder. Exit code 0 on success, 2 for a bad command line or an unwritable output folder.
 */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
                "Simulates the SIGCOMM 2018 paper's datacenter (144 hosts, 9 racks, 10/40 Gbit/s, 8 priorities)",
                "in virtual time, every host running the real Homa engine, and reports per-size slowdowns."})
public final class SimulateCommand implements Callable<Integer> {
    @Option(names = "--workload", defaultValue = "w4", description = "w1..w5 (default: ${DEFAULT-VALUE}).")
    String workload;

    @Option(names = "--load", defaultValue = "0.8", description = "Offered load, fraction of each host's link (default: ${DEFAULT-VALUE}).")
    double load;

    @Option(names = "--hosts", defaultValue = "144", description = "Hosts (default: ${DEFAULT-VALUE}).")
    int hosts;

    @Option(names = "--racks", description = "Racks (default: hosts / 16, at least 1).")
    Integer racks;

    @Option(names = "--quick", description = "Short warm-up and measurement (the whole command under 2 minutes for one run).")
    boolean quick;

    @Option(names = {"-o", "--out"}, paramLabel = "DIR", defaultValue = "simulate-results",
            description = "Output folder (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the run (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--window-ms", description = "Measurement window in virtual ms (default: 100, quick 10; W1 a fifth, W2 two fifths).")
    Double windowMs;

    @Option(names = "--warmup-ms", description = "Warm-up in virtual ms (default: 30, quick 5; W1 a fifth, W2 two fifths).")
    Double warmupMs;

    @Option(names = "--drain-ms", description = "Drain after the window, traffic going on, in virtual ms (default: 50, quick 5; W1 a fifth, W2 two fifths).")
    Double drainMs;

    @Option(names = "--ablation", defaultValue = "homa", description = "homa, one-priority, fifo or no-overcommit (default: ${DEFAULT-VALUE}).")
    String ablation;

    @Option(names = "--ablations", description = "Also run one-priority, fifo and no-overcommit; writes ablations.json and ablations.svg.")
    boolean ablations;

    @Option(names = "--sweep", description = "Sweep the offered load (--loads); writes sweep.json.")
    boolean sweep;

    @Option(names = "--loads", split = ",", defaultValue = "0.5,0.6,0.7,0.8,0.9,0.95", description = "Loads of --sweep (default: ${DEFAULT-VALUE}).")
    List<Double> loads;

    @Option(names = "--tune", description = "Search engine settings for the workload and load; writes tune.json and prints the best as HomaConfig.")
    boolean tune;

    @Option(names = "--figure", description = "W1-W5 at --load beside the paper's curves; writes figure.json and figure.svg.")
    boolean figure;

    @Option(names = "--multipath", defaultValue = "spray", description = "spray or flow-hash (default: ${DEFAULT-VALUE}).")
    String multipath;

    @Option(names = "--oversubscription", defaultValue = "1.0", description = "Rack uplink oversubscription (default: ${DEFAULT-VALUE}).")
    double oversubscription;

    @Option(names = "--priority-levels", defaultValue = "8", description = "Priority queues per switch port (default: ${DEFAULT-VALUE}).")
    int priorityLevels;

    @Option(names = "--buffer-bytes", description = "Buffer of each switch port and NIC in bytes (default: unlimited, as the paper).")
    Long bufferBytes;

    @Option(names = "--host-gbps", defaultValue = "10", description = "Host link rate (default: ${DEFAULT-VALUE}).")
    double hostGbps;

    @Option(names = "--fabric-gbps", defaultValue = "40", description = "ToR-aggregation link rate (default: ${DEFAULT-VALUE}).")
    double fabricGbps;

    private final PrintStream stdout;
    private final PrintStream stderr;
    private final String commandLine;

    SimulateCommand(PrintStream stdout, PrintStream stderr, String commandLine) {
        this.stdout = stdout;
        this.stderr = stderr;
        this.commandLine = commandLine;
    }

    /** Parses {@code args} (what follows "simulate") and runs; returns the exit code. */
    public static int execute(String[] args) {
        return execute(args, System.out, System.err);
    }

    public static int execute(String[] args, PrintStream stdout, PrintStream stderr) {
        return Cli.execute(new SimulateCommand(stdout, stderr, Cli.commandLine("simulate", args)), args, stdout, stderr);
    }

    @Override
    public Integer call() {
        DatacenterTopology topo;
        SimAblation chosen;
        try {
            if (!workload.matches("(?i)w[1-5]")) {
                throw new IllegalArgumentException("--workload must be w1..w5, was " + workload);
            }
            if (!(load > 0 && load <= 1.5)) {
                throw new IllegalArgumentException("--load must be in (0, 1.5], was " + load);
            }
            topo = topology();
            chosen = SimAblation.byLabel(ablation);
            Files.createDirectories(out);
        } catch (IllegalArgumentException e) {
            stderr.println("simulate: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            stderr.println("simulate: cannot create output folder " + out + ": " + e);
            return 2;
        }
        EngineConfig engine = Datacenter.engineConfigFor(topo);
        stderr.println("simulate: " + topo);
        long start = System.nanoTime();
        try {
            if (figure) {
                SimFigure.run(this, topo, engine);
            } else if (sweep) {
                runSweep(topo, engine);
            } else if (tune) {
                SimTuner.run(this, topo, engine);
            } else {
                runOne(topo, engine, chosen);
            }
        } catch (IOException e) {
            stderr.println("simulate: cannot write to " + out + ": " + e);
            return 2;
        }
        stderr.printf(Locale.ROOT, "simulate: done in %.1f s%n", (System.nanoTime() - start) / 1e9);
        return 0;
    }

    private DatacenterTopology topology() {
        int r = racks != null ? racks : Math.max(1, hosts / 16);
        DatacenterTopology.Builder b = DatacenterTopology.builder().hosts(hosts).racks(r)
                .hostLinkBitsPerSecond(Math.round(hostGbps * 1e9)).fabricLinkBitsPerSecond(Math.round(fabricGbps * 1e9))
                .oversubscription(oversubscription).priorityLevels(priorityLevels);
        switch (multipath) {
            case "spray" -> b.multipath(DatacenterTopology.Multipath.SPRAY);
            case "flow-hash" -> b.multipath(DatacenterTopology.Multipath.FLOW_HASH);
            default -> throw new IllegalArgumentException("--multipath must be spray or flow-hash, was " + multipath);
        }
        if (bufferBytes != null) {
            b.portBufferBytes(bufferBytes);
        }
        return b.build();
    }

    /**
     * Share of the default virtual times a workload runs: W1 and W2 are mostly tiny messages, so
     * the same virtual time holds many times the packets (and wall time) of W3-W5, and their
     * steady state comes sooner (their largest messages are 100 KB and 3.5 MB).
     */
    static double timeShare(String w) {
        return switch (w.toLowerCase(Locale.ROOT)) {
            case "w1" -> 0.2;
            case "w2" -> 0.4;
            default -> 1.0;
        };
    }

    SimRun spec(String w, double l, DatacenterTopology topo, EngineConfig engine, SimAblation a) {
        double share = timeShare(w);
        double warm = warmupMs != null ? warmupMs : (quick ? 5 : 30) * share;
        double window = windowMs != null ? windowMs : (quick ? 10 : 100) * share;
        double drain = drainMs != null ? drainMs : (quick ? 5 : 50) * share;
        return new SimRun(w.toLowerCase(Locale.ROOT), l, topo, engine, a, seed,
                (long) (warm * 1e6), (long) (window * 1e6), (long) (drain * 1e6));
    }

    Map<String, Object> runLogged(SimRun run) {
        Map<String, Object> r = run.execute();
        stderr.println("simulate: " + SimRun.summary(r));
        return r;
    }

    private void runOne(DatacenterTopology topo, EngineConfig engine, SimAblation chosen) throws IOException {
        Map<String, Object> r = runLogged(spec(workload, load, topo, engine, chosen));
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("command", commandLine);
        json.putAll(r);
        write("results.json", Json.write(json));
        stdout.print(SimTables.buckets(r));
        if (ablations) {
            List<Map<String, Object>> runs = new ArrayList<>();
            runs.add(r);
            for (SimAblation a : SimAblation.values()) {
                if (a != chosen) {
                    runs.add(runLogged(spec(workload, load, topo, engine, a)));
                }
            }
            Map<String, Object> all = new LinkedHashMap<>();
            all.put("command", commandLine);
            all.put("runs", runs);
            write("ablations.json", Json.write(all));
            write("ablations.svg", SimCharts.ablations(runs));
            stdout.print(SimTables.compare(runs));
        }
    }

    private void runSweep(DatacenterTopology topo, EngineConfig engine) throws IOException {
        List<Map<String, Object>> runs = new ArrayList<>();
        for (double l : loads) {
            runs.add(runLogged(spec(workload, l, topo, engine, SimAblation.byLabel(ablation))));
        }
        Map<String, Object> all = new LinkedHashMap<>();
        all.put("command", commandLine);
        all.put("runs", runs);
        write("sweep.json", Json.write(all));
        stdout.print(SimTables.sweep(runs));
    }

    void write(String name, String text) throws IOException {
        Files.writeString(out.resolve(name), text, StandardCharsets.UTF_8);
        stderr.println("simulate: wrote " + out.resolve(name));
    }

    PrintStream stdout() {
        return stdout;
    }

    PrintStream stderr() {
        return stderr;
    }

    String commandLine() {
        return commandLine;
    }

    String workload() {
        return workload;
    }

    double load() {
        return load;
    }
}
