package io.homa.bench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code compare}: the curated side-by-side run of Homa, TCP (one connection; a pool), raw UDP and
 * gRPC on this host; with {@code --sweep}, the loaded scenario at several background loads. Prints
 * progress on stderr, the table on stdout, and writes {@code results.json} and
 * {@code latency.svg} into the output folder. Exit code 0 when every run succeeded, 1 when some
 * failed (their figures are missing and the table says why), 2 for a bad command line or when the
 * output cannot be written.
 */
@Command(name = "compare", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
                "Runs Homa, tcp-single, tcp-pool, udp-raw, grpc and grpc-homa side by side on this host (127.0.0.1 only)",
                "(and homa-2loops, Homa with two engines per socket, in the throughput scenarios)",
                "and reports p50/p99/p99.9 latency, CPU and allocation per call per transport and scenario,",
                "with Homa/baseline ratios (of the medians over the repetitions, and the min-max of the paired ratios).",
                "Full run: about 8 minutes on 2 cores; --quick: about 2.5 minutes (it prints what it plans)."})
public final class CompareCommand implements Callable<Integer> {
    @Option(names = "--quick", description = "Fewer scenarios, calls and repetitions (about 2.5 minutes).")
    boolean quick;

    @Option(names = "--processes", defaultValue = "1", description = "1: client and server in this JVM (default);"
            + " 2: each transport's servers in a JVM of their own, as a user runs them (cpu and allocation per call"
            + " are then both processes' together).")
    int processes;

    @Option(names = "--path", defaultValue = "loopback", description = "loopback (default), or veth: as root, client"
            + " and servers in two network namespaces of their own joined by a veth pair at --mtu, each in its own"
            + " JVM (implies --processes 2); nothing is left behind.")
    String path;

    @Option(names = "--mtu", defaultValue = "1500", description = "The veth pair's MTU with --path veth (default 1500).")
    int mtu;

    /** Set by the outer compare of --path veth for the one it runs in the client's namespace: "NS,IP,MTU". */
    @Option(names = "--inside-veth", hidden = true)
    String insideVeth;

    @Option(names = "--micrometer", description = "Attach homa-micrometer's binder to every Homa socket (JFR events"
            + " stay off): run with and without it to see its overhead.")
    boolean micrometer;

    @Option(names = "--smoke", hidden = true, description = "A few hundred calls in all (tests).")
    boolean smoke;

    @Option(names = {"-o", "--out"}, paramLabel = "DIR", defaultValue = "homa-bench-results",
            description = "Folder for results.json and latency.svg (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--transports", split = ",", paramLabel = "NAME",
            description = "Transports to run (default: homa, homa-2loops, tcp-single, tcp-pool, udp-raw, grpc, grpc-homa;"
                    + " also known: grpc-pool, and homa-epoll, homa-iouring, homa-nio: Homa on one Netty transport).")
    List<String> transports;

    @Option(names = "--scenarios", split = ",", paramLabel = "NAME",
            description = "Scenarios to run (default: the mode's set). Known: unloaded-100B, unloaded-1KB, unloaded-10KB, "
                    + "unloaded-1MB, loaded-100B, loaded-100B-4clients, throughput-1MB, throughput-100B; "
                    + "and on request only incast-1MB-8clients (eight clients start a 1 MB call at once, round after round).")
    List<String> scenarios;

    @Option(names = "--repetitions", paramLabel = "N", description = "Repetitions per transport and scenario (median reported).")
    Integer repetitions;

    @Option(names = "--background-gbit", paramLabel = "GBIT", defaultValue = "2.0",
            description = "Offered background of the loaded scenarios: 1 MB calls with Poisson arrivals, Gbit/s each way, "
                    + "the same for every transport (default: ${DEFAULT-VALUE}).")
    double backgroundGbit;

    @Option(names = "--sweep", description = "Instead of the scenarios: loaded-100B at several background loads for every "
            + "transport; writes sweep.json and sweep.svg (p99 against background load).")
    boolean sweep;

    @Option(names = "--sweep-loads", split = ",", paramLabel = "GBIT",
            description = "Offered background loads of --sweep, Gbit/s (default: 0.5,1,2,4,6).")
    List<Double> sweepLoads;

    @Option(names = "--call-timeout", paramLabel = "SECONDS", defaultValue = "10",
            description = "A call without a reply after this long fails its run (default: ${DEFAULT-VALUE}).")
    int callTimeoutSeconds;

    private final PrintStream stdout;
    private final PrintStream stderr;
    private final String commandLine;

    CompareCommand(PrintStream stdout, PrintStream stderr, String commandLine) {
        this.stdout = stdout;
        this.stderr = stderr;
        this.commandLine = commandLine;
    }

    /** Parses {@code args} (what follows "compare") and runs; returns the exit code. */
    public static int execute(String[] args) {
        return execute(args, System.out, System.err);
    }

    public static int execute(String[] args, PrintStream stdout, PrintStream stderr) {
        CompareCommand c = new CompareCommand(stdout, stderr, Cli.commandLine("compare", args));
        c.args = args.clone();
        return Cli.execute(c, args, stdout, stderr);
    }

    /** The arguments as given: the veth path passes them on to the compare it runs in a namespace. */
    private String[] args = new String[0];

    /** The server JVMs of {@code --processes 2}, ended when the comparison ends, however it ends. */
    private final List<SeparateProcessTransport> serverJvms = new ArrayList<>();

    @Override
    public Integer call() {
        try {
            return compare();
        } finally {
            for (SeparateProcessTransport t : serverJvms) {
                t.close();
            }
        }
    }

    private Integer compare() {
        if (!path.equals("loopback") && !path.equals("veth")) {
            stderr.println("compare: --path must be loopback or veth, was " + path);
            return 2;
        }
        if (path.equals("veth") && insideVeth == null) {
            return onVeth();
        }
        RunMode mode = smoke ? RunMode.SMOKE : quick ? RunMode.QUICK : RunMode.FULL;
        int reps = repetitions != null ? repetitions : mode.repetitions();
        String[] inside = insideVeth == null ? null : insideVeth.split(",");
        if (inside != null) {
            processes = 2;
        }
        if (processes != 1 && processes != 2) {
            stderr.println("compare: --processes must be 1 or 2, was " + processes);
            return 2;
        }
        if (reps < 1 || callTimeoutSeconds < 1) {
            stderr.println("compare: --repetitions and --call-timeout must be at least 1");
            return 2;
        }
        if (!(backgroundGbit > 0) || sweepLoads != null && sweepLoads.stream().anyMatch(l -> l == null || !(l > 0))) {
            stderr.println("compare: --background-gbit and --sweep-loads must be positive");
            return 2;
        }
        List<Transport> chosen = new ArrayList<>();
        try {
            for (String n : transports == null || transports.isEmpty() ? Transports.ALL : transports) {
                Transport t = Transports.create(n.trim());
                t = micrometer && t instanceof HomaTransport h ? h.withMicrometer() : t;
                if (processes == 2) {
                    SeparateProcessTransport separate = inside == null ? new SeparateProcessTransport(t)
                            : new SeparateProcessTransport(t, VethPath.inNamespace(inside[0]),
                                    List.of("-D" + NettyIo.HOST_PROPERTY + "=" + inside[1]));
                    serverJvms.add(separate);
                    t = separate;
                }
                chosen.add(t);
            }
        } catch (IllegalArgumentException e) {
            stderr.println("compare: " + e.getMessage());
            return 2;
        }
        List<Scenario> chosenScenarios = new ArrayList<>();
        try {
            if (scenarios == null || scenarios.isEmpty()) {
                chosenScenarios.addAll(mode.scenarios());
            } else {
                for (String s : scenarios) {
                    chosenScenarios.add(Scenario.byId(s.trim()));
                }
            }
        } catch (IllegalArgumentException e) {
            stderr.println("compare: " + e.getMessage());
            return 2;
        }
        try {
            Files.createDirectories(out);
        } catch (IOException e) {
            stderr.println("compare: cannot create output folder " + out + ": " + e);
            return 2;
        }

        // The plan: scenario by scenario; in each repetition every transport once, in a rotated
        // order so that no transport always runs first (cold) or last.
        record Planned(Scenario scenario, int rep, Transport transport) { }
        List<Planned> plan = new ArrayList<>();
        for (Scenario s : chosenScenarios) {
            List<Transport> applicable = new ArrayList<>();
            for (Transport t : chosen) {
                if (s.appliesTo(t)) {
                    applicable.add(t);
                }
            }
            for (int r = 0; r < reps; r++) {
                for (int i = 0; i < applicable.size(); i++) {
                    plan.add(new Planned(s, r, applicable.get((i + r) % applicable.size())));
                }
            }
        }
        Duration callTimeout = Duration.ofSeconds(callTimeoutSeconds);
        stderr.printf(Locale.ROOT, "compare: %d runs (%s mode, %d repetitions) of %s; netty %s; output %s%n",
                plan.size(), mode.name().toLowerCase(Locale.ROOT), reps, names(chosen), NettyIo.transportName(),
                out.toAbsolutePath());
        Map<String, Object> machine = MachineInfo.collect();
        Map<String, Object> homaIo = new LinkedHashMap<>();
        for (Transport t : chosen) {
            if (t instanceof HomaTransport h) {
                homaIo.put(t.name(), h.ioTransportInUse()); // after any fallback: what the figures are of
            }
        }
        if (!homaIo.isEmpty()) {
            machine.put("homa_transports", homaIo);
        }
        machine.put("processes", processes);
        machine.put("path", inside == null ? "loopback" : "veth");
        machine.put("mtu", inside == null ? machine.get("loopback_mtu") : Integer.parseInt(inside[2]));
        if (Boolean.TRUE.equals(machine.get("busy_at_start"))) {
            stderr.printf(Locale.ROOT, "compare: WARNING: 1-minute load average %.2f on %s CPUs at start (over %.1f per CPU):"
                            + " other work competes for the CPU, so the figures will be noisy; ratios within one run are"
                            + " fairer than absolute figures%n", (Double) machine.get("load_average_at_start"),
                    machine.get("cpus"), MachineInfo.BUSY_LOAD_PER_CPU);
        }
        if (sweep) {
            // The sweep has many points: 3 repetitions in a full run, 1 with --quick, unless given.
            return sweep(mode, chosen, repetitions != null ? reps : mode == RunMode.FULL ? 3 : 1, callTimeout, machine);
        }

        ScenarioRunner runner = new ScenarioRunner(mode, callTimeout, backgroundGbit);
        // The budget is sized from the plan: every run at its caps, the warm-ups, and room for
        // setup; never less than the mode's own budget. Repetitions the steady-state rule runs
        // again add their own time to it (below).
        long nominal = 0;
        for (Planned p : plan) {
            nominal += runner.nominalDuration(p.scenario()).toNanos();
        }
        long warmups = mode.jitWarmup().toNanos() * chosen.stream().map(Transport::warmUpGroup).distinct().count();
        long budget = Math.max(mode.budget().toNanos(), (long) ((nominal + warmups) * BUDGET_ROOM));
        stderr.printf(Locale.ROOT, "compare: at most about %d s of runs and warm-ups planned (budget %d s, plus the time of"
                + " any repetition the JIT makes run again; most runs end before their caps)%n", TimeUnit.NANOSECONDS.toSeconds(nominal + warmups),
                TimeUnit.NANOSECONDS.toSeconds(budget));
        long started = System.nanoTime();
        warmUp(runner, mode, chosen);
        Map<String, List<RunResult>> byKey = new LinkedHashMap<>();
        int width = String.valueOf(plan.size()).length();
        long budgetEnd = started + budget;
        int repeated = 0;
        long againNanos = 0;
        for (int i = 0; i < plan.size(); i++) {
            Planned p = plan.get(i);
            // Budget guard: the remaining runs share what is left of the budget.
            long planned = 0;
            for (int j = i; j < plan.size(); j++) {
                planned += runner.nominalDuration(plan.get(j).scenario()).toNanos();
            }
            // Repetitions run again by the steady-state rule extend the budget by their own time:
            // the guard shrinks runs to fit the plan, never to pay for the rule's extra warm-up.
            long left = budgetEnd + againNanos - System.nanoTime();
            double scale = planned <= 0 ? 1.0 : Math.max(0.1, Math.min(1.0, (double) left / planned));
            runner.setTimeScale(scale);
            stderr.printf(Locale.ROOT, "[%" + width + "d/%d] %-21s rep %d/%d  %-10s ", i + 1, plan.size(),
                    p.scenario().id(), p.rep() + 1, reps, p.transport().name());
            stderr.flush();
            String scaled = scale < 0.995 ? String.format(Locale.ROOT, ", time caps x%.2f to stay in budget", scale) : "";
            RunResult r = runner.run(p.scenario(), p.transport(), p.rep());
            // Steady state: a repetition counts only when the JIT was quiet in its measured
            // interval; else it is run again (more warm-up), up to a cap, after which it is
            // reported unsteady and kept out of the figures (Summary).
            for (int again = 0; !r.steady() && again < mode.steadyRetries(); again++) {
                progress(r, scaled + String.format(Locale.ROOT, "; the JIT took %.1f%% of it: not counted, run again",
                        100 * r.jitShare()));
                repeated++;
                stderr.printf(Locale.ROOT, "[%" + width + "d/%d] %-21s rep %d/%d  %-10s ", i + 1, plan.size(),
                        p.scenario().id(), p.rep() + 1, reps, p.transport().name());
                long againStart = System.nanoTime();
                r = runner.run(p.scenario(), p.transport(), p.rep());
                againNanos += System.nanoTime() - againStart;
            }
            byKey.computeIfAbsent(p.transport().name() + "\n" + p.scenario().id(), k -> new ArrayList<>()).add(r);
            // Smoke runs apply no rule: their repetitions count whatever the JIT did.
            progress(r, scaled + (r.steady() || mode == RunMode.SMOKE ? "" : String.format(Locale.ROOT, "; UNSTEADY, not counted: the JIT took %.1f%% of it",
                    100 * r.jitShare())));
        }
        machine.put("steady_state_rule", mode == RunMode.SMOKE ? "none (smoke mode)" : "a repetition counts when the JIT compiled for under "
                + Math.round(RunResult.MAX_JIT_SHARE * 100) + "% of its measured interval; else it runs again, up to "
                + mode.steadyRetries() + " times, and is then reported unsteady and not counted");
        machine.put("repetitions_run_again", repeated);
        double elapsed = (System.nanoTime() - started) / 1e9;

        List<Summary> summaries = new ArrayList<>();
        for (List<RunResult> runs : byKey.values()) {
            summaries.add(Summary.of(runs.get(0).transport(), runs.get(0).scenario(), runs, mode != RunMode.SMOKE));
        }
        machine.put("background_offered_gbit_per_s", backgroundGbit);
        describeRun(machine, mode, reps, elapsed);
        CompareReport report = new CompareReport(summaries, machine, commandLine);
        if (!publish(report.table(), "results.json", report.toJson(), "latency.svg",
                LatencyChart.svg(report, subtitle(machine, reps)), elapsed)) {
            return 2;
        }
        List<Summary> failures = report.failures();
        if (!failures.isEmpty()) {
            stderr.printf(Locale.ROOT, "compare: %d transport/scenario pairs had failed runs:%n", failures.size());
            for (Summary f : failures) {
                stderr.printf(Locale.ROOT, "  %s %s: %d of %d repetitions failed: %s%n", f.transport(), f.scenario().id(),
                        f.failedRepetitions(), f.repetitions(), f.error());
            }
            return 1;
        }
        return 0;
    }

    /**
     * {@code --path veth}: makes the two namespaces and their link, runs this same comparison in the
     * client's namespace (in a JVM there, with its servers in JVMs in the server's), and removes
     * both namespaces however that ends.
     */
    private int onVeth() {
        if (!VethPath.permitted()) {
            stderr.println("compare: --path veth needs root: it creates two network namespaces and a veth pair"
                    + " (run it as root, or use --path loopback --processes 2)");
            return 2;
        }
        try (VethPath veth = VethPath.create(mtu)) {
            List<String> inner = new ArrayList<>(List.of("compare"));
            inner.addAll(List.of(args));
            inner.add("--inside-veth");
            inner.add(veth.namespaces().get(1) + "," + veth.serverIp() + "," + veth.mtu());
            List<String> cmd = Main.javaCommand(veth.inClient(),
                    List.of("-D" + NettyIo.HOST_PROPERTY + "=" + veth.clientIp()), inner);
            stderr.printf(Locale.ROOT, "compare: veth path at MTU %d: client %s in %s, servers %s in %s%n", veth.mtu(),
                    veth.clientIp(), veth.namespaces().get(0), veth.serverIp(), veth.namespaces().get(1));
            Process p = new ProcessBuilder(cmd).inheritIO().start();
            return p.waitFor();
        } catch (IllegalStateException | IllegalArgumentException | IOException e) {
            stderr.println("compare: the veth path failed: " + e.getMessage());
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 2;
        }
    }

    /** Room in the budget beyond the plan at its caps: the repetitions run again, each run's setup. */
    private static final double BUDGET_ROOM = 1.25;

    private void warmUp(ScenarioRunner runner, RunMode mode, List<Transport> chosen) {
        if (!mode.jitWarmup().isZero()) {
            Set<String> warmed = new HashSet<>();
            for (Transport t : chosen) {
                if (!warmed.add(t.warmUpGroup())) {
                    continue; // the same code as one warmed already (homa-2loops after homa)
                }
                stderr.printf(Locale.ROOT, "compare: warming up %s (%d s, discarded)%n", t.name(), mode.jitWarmup().toSeconds());
                runner.warmUp(t, mode.jitWarmup());
            }
        }
    }

    /** The end of a run's progress line. */
    private void progress(RunResult r, String extra) {
        if (!r.ok()) {
            stderr.printf(Locale.ROOT, "FAILED: %s%n", r.error());
            return;
        }
        PoissonLoad.Interval bg = r.background();
        String background = bg == null ? "" : String.format(Locale.ROOT,
                ", background %s of %s Gbit/s (%d of %d arrivals completed, %d shed)%s",
                CompareReport.fmt(bg.achievedGbit()), CompareReport.fmt(bg.offeredGbit()), bg.completed(), bg.arrived(),
                bg.shed(), bg.carried() ? "" : " NOT CARRIED");
        stderr.printf(Locale.ROOT, "p50 %8s us  p99 %8s us  p99.9 %8s us  cpu %6s us/call  (%d calls, %.1f s, JIT compiling %s ms%s%s)%n",
                CompareReport.fmt(r.stats().p50us()), CompareReport.fmt(r.stats().p99us()),
                CompareReport.fmt(r.stats().p999us()), CompareReport.fmt(r.cpuUsPerCall()), r.stats().samples(),
                r.seconds(), CompareReport.fmt(r.jitMs()), background, extra);
    }

    /** {@code --sweep}: loaded-100B at each offered load, every transport that carries 1 MB calls. */
    private int sweep(RunMode mode, List<Transport> chosen, int reps, Duration callTimeout, Map<String, Object> machine) {
        List<Double> loads = sweepLoads == null || sweepLoads.isEmpty() ? LoadSweep.DEFAULT_LOADS : sweepLoads;
        List<Transport> applicable = new ArrayList<>();
        for (Transport t : chosen) {
            if (Scenario.LOADED_100B.appliesTo(t)) {
                applicable.add(t);
            }
        }
        int total = loads.size() * reps * applicable.size();
        stderr.printf(Locale.ROOT, "compare --sweep: %d runs of %s at %s Gbit/s of background (%d repetitions); output %s%n",
                total, Scenario.LOADED_100B.id(), loads, reps, out.toAbsolutePath());
        long started = System.nanoTime();
        warmUp(new ScenarioRunner(mode, callTimeout), mode, applicable);
        Map<String, List<LoadSweep.Point>> curves = new LinkedHashMap<>();
        int width = String.valueOf(total).length();
        int n = 0;
        for (double load : loads) {
            ScenarioRunner runner = new ScenarioRunner(mode, callTimeout, load);
            Map<String, List<RunResult>> runs = new LinkedHashMap<>();
            for (int r = 0; r < reps; r++) {
                for (int i = 0; i < applicable.size(); i++) {
                    Transport t = applicable.get((i + r) % applicable.size());
                    stderr.printf(Locale.ROOT, "[%" + width + "d/%d] %5s Gbit/s rep %d/%d  %-10s ", ++n, total,
                            CompareReport.fmt(load), r + 1, reps, t.name());
                    stderr.flush();
                    RunResult result = runner.run(Scenario.LOADED_100B, t, r);
                    runs.computeIfAbsent(t.name(), k -> new ArrayList<>()).add(result);
                    progress(result, "");
                }
            }
            for (Transport t : applicable) {
                curves.computeIfAbsent(t.name(), k -> new ArrayList<>())
                        .add(new LoadSweep.Point(load, Summary.of(t.name(), Scenario.LOADED_100B, runs.get(t.name()), false)));
            }
        }
        double elapsed = (System.nanoTime() - started) / 1e9;
        describeRun(machine, mode, reps, elapsed);
        LoadSweep result = new LoadSweep(curves, machine, commandLine);
        if (!publish(result.table(), "sweep.json", result.toJson(), "sweep.svg",
                SweepChart.svg(result, subtitle(machine, reps)), elapsed)) {
            return 2;
        }
        for (List<LoadSweep.Point> points : curves.values()) {
            for (LoadSweep.Point p : points) {
                if (p.summary().error() != null) {
                    return 1;
                }
            }
        }
        return 0;
    }

    private static void describeRun(Map<String, Object> machine, RunMode mode, int reps, double elapsed) {
        machine.put("mode", mode.name().toLowerCase(Locale.ROOT));
        machine.put("repetitions", reps);
        machine.put("elapsed_s", Math.round(elapsed * 10) / 10.0);
    }

    /** Prints the table on stdout and writes the JSON and the chart into the output folder. */
    private boolean publish(String table, String jsonName, Map<String, Object> json, String svgName, String svg,
                            double elapsed) {
        stdout.println();
        stdout.print(table);
        stdout.flush();
        Path jsonPath = out.resolve(jsonName);
        Path svgPath = out.resolve(svgName);
        try {
            Files.writeString(jsonPath, Json.write(json), StandardCharsets.UTF_8);
            Files.writeString(svgPath, svg, StandardCharsets.UTF_8);
        } catch (IOException e) {
            stderr.println("compare: cannot write results into " + out + ": " + e);
            return false;
        }
        stderr.printf(Locale.ROOT, "compare: done in %.0f s; wrote %s and %s%n", elapsed, jsonPath, svgPath);
        return true;
    }

    private static String subtitle(Map<String, Object> machine, int reps) {
        return String.format(Locale.ROOT, "%s, %s CPUs, %s, netty %s; %s mode, median of %d repetitions; %s",
                machine.get("cpu_model") != null ? machine.get("cpu_model") : machine.get("arch"), machine.get("cpus"),
                machine.get("os"), machine.get("netty_transport"), machine.get("mode"), reps, machine.get("timestamp"));
    }

    private static String names(List<Transport> ts) {
        List<String> n = new ArrayList<>();
        for (Transport t : ts) {
            n.add(t.name());
        }
        return String.join(", ", n);
    }
}
