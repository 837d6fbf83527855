package io.homa.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code compare} measured, and the three ways it is shown: the text table, results.json
 * (through {@link Json}) and the chart (through {@link LatencyChart}).
 *
 * <p>results.json: {@code {"results": {TRANSPORT: {SCENARIO: {"p50_us", "p99_us", "p999_us", ...}}},
 * "ratios": {...}, "machine": {...}, "command": "..."}}. Ratios are Homa's figure divided by the
 * baseline's (below 1: Homa is faster, for latency; above 1: Homa carries more, for throughput).
 */
public final class CompareReport {
    /** A target of issue 4: the ratio {@code name} should be at most (or at least) {@code limit}. */
    public record Target(String name, String scenario, String metric, String numerator, String denominator,
                         double limit, boolean atMost) {
    }

    /**
     * The targets of the data-path issue (Homa against the kernel's TCP, in our own process) and of
     * homa-grpc (gRPC over Homa against gRPC over HTTP/2). A denominator {@code T@scenario} is
     * transport T in another scenario; {@code 1} makes the metric an absolute figure.
     */
    public static final List<Target> TARGETS = List.of(
            new Target("unloaded-100B cpu/call homa/tcp-single", "unloaded-100B", "cpu_us_per_call", "homa", "tcp-single", 1.0, true),
            new Target("unloaded-1MB cpu/call homa/tcp-single", "unloaded-1MB", "cpu_us_per_call", "homa", "tcp-single", 1.0, true),
            new Target("unloaded-100B p50 homa/tcp-single", "unloaded-100B", "p50", "homa", "tcp-single", 1.1, true),
            new Target("unloaded-100B p50 homa/udp-raw", "unloaded-100B", "p50", "homa", "udp-raw", 1.3, true),
            new Target("unloaded-1MB p50 homa/tcp-single", "unloaded-1MB", "p50", "homa", "tcp-single", 1.2, true),
            new Target("throughput-1MB Gbit/s homa/tcp-pool", "throughput-1MB", "gbit_per_s", "homa", "tcp-pool", 1.0, false),
            new Target("unloaded-100B alloc B/call homa", "unloaded-100B", "alloc_bytes_per_call", "homa", "1", 512, true),
            new Target("loaded-100B p99 homa/tcp-single", "loaded-100B", "p99", "homa", "tcp-single", 0.1, true),
            new Target("loaded-100B p99 homa loaded/unloaded", "loaded-100B", "p99", "homa", "homa@unloaded-100B", 3, true),
            new Target("loaded-100B p99 grpc-homa/grpc", "loaded-100B", "p99", "grpc-homa", "grpc", 0.3, true),
            new Target("loaded-100B p99 grpc-homa-default/grpc-default", "loaded-100B", "p99",
                    "grpc-homa-default", "grpc-default", 0.3, true),
            new Target("unloaded-100B p50 grpc-homa/grpc", "unloaded-100B", "p50", "grpc-homa", "grpc", 0.8, true),
            new Target("unloaded-100B cpu/call grpc-homa/grpc", "unloaded-100B", "cpu_us_per_call", "grpc-homa", "grpc",
                    0.8, true),
            new Target("throughput-1MB Gbit/s grpc-homa/grpc", "throughput-1MB", "gbit_per_s", "grpc-homa", "grpc", 1.0,
                    false),
            new Target("throughput-1MB alloc B/call grpc-homa", "throughput-1MB", "alloc_bytes_per_call", "grpc-homa", "1",
                    2_500_000, true),
            // The security layer (compare --transports homa,homa-psp,...): sealed against plain, one run.
            new Target("unloaded-100B cpu/call homa-psp/homa", "unloaded-100B", "cpu_us_per_call", "homa-psp", "homa",
                    1.25, true),
            new Target("throughput-1MB Gbit/s homa-psp/homa", "throughput-1MB", "gbit_per_s", "homa-psp", "homa", 0.8,
                    false),
            // The same with Amazon Corretto Crypto Provider's AES-GCM (HomaSecurity.cipherProvider).
            new Target("unloaded-100B cpu/call homa-psp-accp/homa", "unloaded-100B", "cpu_us_per_call", "homa-psp-accp",
                    "homa", 1.25, true),
            new Target("throughput-1MB Gbit/s homa-psp-accp/homa", "throughput-1MB", "gbit_per_s", "homa-psp-accp", "homa",
                    0.8, false));

    private final Map<String, Map<Scenario, Summary>> results = new LinkedHashMap<>();
    private final Map<String, Object> machine;
    private final String command;

    public CompareReport(List<Summary> summaries, Map<String, Object> machine, String command) {
        for (String t : Transports.KNOWN) {
            for (Summary s : summaries) {
                if (s.transport().equals(t)) {
                    results.computeIfAbsent(t, k -> new LinkedHashMap<>()).put(s.scenario(), s);
                }
            }
        }
        this.machine = machine;
        this.command = command;
    }

    /** Summaries by transport (display order), then scenario. */
    public Map<String, Map<Scenario, Summary>> results() {
        return results;
    }

    public Map<String, Object> machine() {
        return machine;
    }

    /** The summary of {@code transport} in {@code scenario}, if measured. */
    public Summary get(String transport, Scenario scenario) {
        Map<Scenario, Summary> m = results.get(transport);
        Summary s = m == null ? null : m.get(scenario);
        return s != null && s.measured() ? s : null;
    }

    /** Scenarios present, in the order they were run. */
    public List<Scenario> scenarios() {
        List<Scenario> out = new ArrayList<>();
        for (Scenario s : Scenario.values()) {
            for (Map<Scenario, Summary> m : results.values()) {
                if (m.containsKey(s) && !out.contains(s)) {
                    out.add(s);
                }
            }
        }
        return out;
    }

    /** Summaries whose every repetition failed or that had a failed repetition. */
    public List<Summary> failures() {
        List<Summary> out = new ArrayList<>();
        for (Map<Scenario, Summary> m : results.values()) {
            for (Summary s : m.values()) {
                if (s.error() != null) {
                    out.add(s);
                }
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ results.json

    /** The results.json document. */
    public Map<String, Object> toJson() {
        Map<String, Object> root = new LinkedHashMap<>();
        Map<String, Object> res = new LinkedHashMap<>();
        for (Map.Entry<String, Map<Scenario, Summary>> t : results.entrySet()) {
            Map<String, Object> byScenario = new LinkedHashMap<>();
            for (Summary s : t.getValue().values()) {
                if (s.measured()) {
                    byScenario.put(s.scenario().id(), summaryJson(s));
                }
            }
            if (!byScenario.isEmpty()) {
                res.put(t.getKey(), byScenario);
            }
        }
        root.put("results", res);
        root.put("ratios", ratios());
        root.put("machine", machine);
        root.put("command", command);
        return root;
    }

    private static Map<String, Object> summaryJson(Summary s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("p50_us", s.p50us());
        m.put("p99_us", s.p99us());
        m.put("p999_us", s.p999us());
        m.put("max_us", s.maxUs());
        m.put("mean_us", s.meanUs());
        m.put("samples", s.samples());
        m.put("calls_per_s", s.callsPerSecond());
        m.put("gbit_per_s", s.gbitPerSecond());
        m.put("cpu_us_per_call", s.cpuUsPerCall());
        m.put("alloc_bytes_per_call", s.allocBytesPerCall());
        m.put("cpu_cores", s.cpuCores());
        m.put("jit_ms", s.jitMs());
        m.put("unsteady_repetitions", s.unsteadyRepetitions());
        // Each counted repetition's JIT time and measured interval: the steady-state rule held in each.
        m.put("jit_ms_per_repetition", new ArrayList<Object>(s.okRuns().stream().map(r -> (Object) r.jitMs()).toList()));
        m.put("measured_s_per_repetition", new ArrayList<Object>(s.okRuns().stream().map(r -> (Object) r.measuredSeconds()).toList()));
        if (s.scenario().kind() == Scenario.Kind.LOADED) {
            m.put("background_gbit_per_s", s.backgroundGbit());
            m.put("background_offered_gbit_per_s", s.backgroundOfferedGbit());
            m.put("background_carried", s.backgroundCarried());
            m.put("background_carried_repetitions", s.backgroundCarriedRepetitions());
        }
        m.put("size_bytes", s.scenario().size());
        m.put("outstanding", s.scenario().window());
        m.put("repetitions", s.repetitions());
        m.put("repetitions_ok", s.succeeded());
        m.put("p99_us_per_repetition", new ArrayList<Object>(s.p99PerRepetition()));
        if (s.error() != null) {
            m.put("error", s.error());
        }
        return m;
    }

    /** The ratios object of results.json. */
    public Map<String, Object> ratios() {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String base : List.of(Transports.TCP_SINGLE, Transports.TCP_POOL, Transports.TCP_BLOCKING, Transports.UDP_RAW,
                Transports.UDP_SPIN, Transports.GRPC, Transports.GRPC_POOL)) {
            Map<String, Object> r = pairRatios(Transports.HOMA, base);
            if (!r.isEmpty()) {
                out.put(Transports.HOMA + "/" + base, r);
            }
        }
        Summary unloaded = get(Transports.HOMA, Scenario.UNLOADED_100B);
        if (unloaded != null) {
            Map<String, Object> r = new LinkedHashMap<>();
            for (Scenario s : List.of(Scenario.LOADED_100B, Scenario.LOADED_100B_4CLIENTS)) {
                Summary loaded = get(Transports.HOMA, s);
                if (loaded != null) {
                    r.put(s.id(), percentileRatios(loaded, unloaded, false));
                }
            }
            if (!r.isEmpty()) {
                out.put("homa loaded/unloaded", r);
            }
        }
        // Homa's variants against the default homa: a second engine, and each Netty transport.
        for (String variant : List.of(Transports.HOMA_2LOOPS, Transports.HOMA_2CLIENTS, Transports.HOMA_EPOLL,
                Transports.HOMA_IOURING, Transports.HOMA_NIO)) {
            Map<String, Object> r = pairRatios(variant, Transports.HOMA);
            if (!r.isEmpty()) {
                out.put(variant + "/" + Transports.HOMA, r);
            }
        }
        Map<String, Object> grpcHoma = pairRatios(Transports.GRPC_HOMA, Transports.GRPC);
        if (!grpcHoma.isEmpty()) {
            out.put("grpc-homa/grpc", grpcHoma);
        }
        Map<String, Object> grpcHomaInline = pairRatios(Transports.GRPC_HOMA_INLINE, Transports.GRPC);
        if (!grpcHomaInline.isEmpty()) {
            out.put("grpc-homa-inline/grpc", grpcHomaInline);
        }
        Map<String, Object> grpcHomaDefault = pairRatios(Transports.GRPC_HOMA_DEFAULT, Transports.GRPC_DEFAULT);
        if (!grpcHomaDefault.isEmpty()) {
            out.put("grpc-homa-default/grpc-default", grpcHomaDefault);
        }
        Map<String, Object> tcp = pairRatios(Transports.TCP_SINGLE, Transports.TCP_POOL);
        if (!tcp.isEmpty()) {
            out.put("tcp-single/tcp-pool", tcp);
        }
        Map<String, Object> targets = new LinkedHashMap<>();
        for (Target t : TARGETS) {
            double v = targetValue(t);
            if (Double.isFinite(v)) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("ratio", v);
                m.put(t.atMost() ? "at_most" : "at_least", t.limit());
                m.put("met", t.atMost() ? v <= t.limit() : v >= t.limit());
                targets.put(t.name(), m);
            }
        }
        if (!targets.isEmpty()) {
            out.put("targets", targets);
        }
        return out;
    }

    private Map<String, Object> pairRatios(String num, String den) {
        Map<String, Object> r = new LinkedHashMap<>();
        for (Scenario s : Scenario.values()) {
            Summary a = get(num, s);
            Summary b = get(den, s);
            if (a != null && b != null) {
                Map<String, Object> m = percentileRatios(a, b, true);
                if (s.kind() == Scenario.Kind.THROUGHPUT || s.kind() == Scenario.Kind.INCAST) {
                    m.put("gbit_per_s", a.gbitPerSecond() / b.gbitPerSecond());
                    putRange(m, "gbit_per_s", a.ratioRange(b, RunResult::gbitPerSecond));
                    m.put("calls_per_s", a.callsPerSecond() / b.callsPerSecond());
                }
                m.put("cpu_us_per_call", a.cpuUsPerCall() / b.cpuUsPerCall());
                putRange(m, "cpu_us_per_call", a.ratioRange(b, RunResult::cpuUsPerCall));
                r.put(s.id(), m);
            }
        }
        return r;
    }

    /**
     * Ratios of the medians; with {@code ranges} (both from the same repetitions) also each
     * ratio's {@code KEY_range}: [min, max] over the repetitions, paired by index.
     */
    private static Map<String, Object> percentileRatios(Summary a, Summary b, boolean ranges) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("p50", a.p50us() / b.p50us());
        m.put("p99", a.p99us() / b.p99us());
        m.put("p999", a.p999us() / b.p999us());
        if (ranges) {
            putRange(m, "p50", a.ratioRange(b, r -> r.stats().p50us()));
            putRange(m, "p99", a.ratioRange(b, r -> r.stats().p99us()));
            putRange(m, "p999", a.ratioRange(b, r -> r.stats().p999us()));
        }
        return m;
    }

    private static void putRange(Map<String, Object> m, String key, double[] range) {
        if (range != null) {
            m.put(key + "_range", List.of(range[0], range[1]));
        }
    }

    /** The measured value of a target's ratio, or NaN if a side is missing. */
    public double targetValue(Target t) {
        Scenario s = Scenario.byId(t.scenario());
        Summary a = get(t.numerator(), s);
        Summary b;
        if (t.denominator().equals("1")) {
            b = a;
        } else if (t.denominator().contains("@")) {
            String[] p = t.denominator().split("@");
            b = get(p[0], Scenario.byId(p[1]));
        } else {
            b = get(t.denominator(), s);
        }
        if (a == null || b == null) {
            return Double.NaN;
        }
        boolean absolute = t.denominator().equals("1");
        return switch (t.metric()) {
            case "alloc_bytes_per_call" -> absolute ? a.allocBytesPerCall() : a.allocBytesPerCall() / b.allocBytesPerCall();
            case "cpu_us_per_call" -> absolute ? a.cpuUsPerCall() : a.cpuUsPerCall() / b.cpuUsPerCall();
            case "p50" -> a.p50us() / b.p50us();
            case "p99" -> a.p99us() / b.p99us();
            case "gbit_per_s" -> a.gbitPerSecond() / b.gbitPerSecond();
            default -> throw new IllegalArgumentException(t.metric());
        };
    }

    // ------------------------------------------------------------------ text table

    /** The table printed at the end of a run. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        int nameWidth = 11;
        for (String transport : results.keySet()) {
            nameWidth = Math.max(nameWidth, transport.length());
        }
        String rowFormat = "%-21s %-" + nameWidth + "s %10s %10s %10s %11s %8s %9s %10s  %s%n";
        sb.append(String.format(Locale.ROOT, rowFormat, "scenario", "transport", "p50 us", "p99 us", "p99.9 us",
                "calls/s", "Gbit/s", "cpu us/c", "alloc B/c", "notes"));
        for (Scenario sc : scenarios()) {
            for (Map.Entry<String, Map<Scenario, Summary>> t : results.entrySet()) {
                Summary s = t.getValue().get(sc);
                if (s == null) {
                    continue;
                }
                String notes = "";
                if (sc.kind() == Scenario.Kind.LOADED && s.measured()) {
                    notes = "background " + fmt(s.backgroundGbit()) + " of " + fmt(s.backgroundOfferedGbit()) + " Gbit/s"
                            + (s.backgroundCarried() ? "" : " NOT CARRIED")
                            + (s.backgroundCarriedRepetitions() == s.succeeded() ? ""
                                    : " (carried in " + s.backgroundCarriedRepetitions() + "/" + s.succeeded() + " repetitions)");
                }
                if (s.unsteadyRepetitions() > 0) {
                    notes += (notes.isEmpty() ? "" : "; ") + s.unsteadyRepetitions() + "/" + s.repetitions()
                            + " repetitions UNSTEADY, not counted (the JIT still compiling)";
                }
                if (s.failedRepetitions() > 0) {
                    notes += (notes.isEmpty() ? "" : "; ") + s.failedRepetitions() + "/" + s.repetitions()
                            + " repetitions FAILED: " + s.error();
                }
                sb.append(String.format(Locale.ROOT, rowFormat, sc.id(), t.getKey(), fmt(s.p50us()), fmt(s.p99us()),
                        fmt(s.p999us()), fmt(s.callsPerSecond()), fmt(s.gbitPerSecond()), fmt(s.cpuUsPerCall()),
                        fmt(s.allocBytesPerCall()), notes));
            }
        }
        sb.append("cpu us/c: process CPU per completed call, alloc B/c: bytes allocated per call (client and server"
                + " together; loaded: probe and background calls)\n");
        sb.append('\n');
        if (!results.containsKey(Transports.HOMA)) {
            sb.append("Homa/TCP ratios: homa was not measured.\n");
            Object tcp = ratios().get("tcp-single/tcp-pool");
            if (tcp instanceof Map<?, ?> m && !m.isEmpty()) {
                sb.append(ratioTable("tcp-single/tcp-pool", m));
            }
            return sb.toString();
        }
        for (Map.Entry<String, Object> e : ratios().entrySet()) {
            if (!e.getKey().equals("targets") && e.getValue() instanceof Map<?, ?> m) {
                sb.append(ratioTable(e.getKey(), m));
            }
        }
        sb.append("Ratios: the one transport's median over the repetitions divided by the other's (what the targets\n"
                + "use); in brackets the min-max of the repetitions' own ratios, each paired with its own, which\n"
                + "the ratio of the medians may fall outside (the two medians can come from different repetitions).\n");
        sb.append("Targets (ratios measured in this run; absolute where named per call):\n");
        for (Target t : TARGETS) {
            double v = targetValue(t);
            sb.append(String.format(Locale.ROOT, "  %-40s %8s   %s %s  %s%n", t.name(), fmt(v),
                    t.atMost() ? "at most" : "at least", fmt(t.limit()),
                    !Double.isFinite(v) ? "not measured" : (t.atMost() ? v <= t.limit() : v >= t.limit()) ? "met" : "MISSED"));
        }
        return sb.toString();
    }

    private static String ratioTable(String title, Map<?, ?> byScenario) {
        StringBuilder sb = new StringBuilder();
        String rowFormat = "  %-19s %19s %19s %19s %19s %19s%n";
        sb.append(String.format(Locale.ROOT, "%-21s %19s %19s %19s %19s %19s%n", title, "p50", "p99", "p99.9", "Gbit/s",
                "cpu/call"));
        for (Map.Entry<?, ?> e : byScenario.entrySet()) {
            Map<?, ?> m = (Map<?, ?>) e.getValue();
            sb.append(String.format(Locale.ROOT, rowFormat, e.getKey(), spread(m, "p50"), spread(m, "p99"),
                    spread(m, "p999"), spread(m, "gbit_per_s"), spread(m, "cpu_us_per_call")));
        }
        sb.append('\n');
        return sb.toString();
    }

    /** "ratio of the medians (min-max of the paired ratios)", or the ratio alone when there is no range. */
    private static String spread(Map<?, ?> m, String key) {
        String v = fmt(m.get(key));
        if (m.get(key + "_range") instanceof List<?> r && r.size() == 2 && !r.get(0).equals(r.get(1))) {
            v += " (" + fmt(r.get(0)) + "-" + fmt(r.get(1)) + ")";
        }
        return v;
    }

    static String fmt(Object o) {
        if (!(o instanceof Number n)) {
            return "-";
        }
        double v = n.doubleValue();
        if (!Double.isFinite(v)) {
            return "-";
        }
        double a = Math.abs(v);
        if (a >= 10_000) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        if (a >= 1) {
            return String.format(Locale.ROOT, "%.2f", v);
        }
        return String.format(Locale.ROOT, "%.3f", v);
    }
}
