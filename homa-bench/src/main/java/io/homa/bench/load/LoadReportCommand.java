package io.homa.bench.load;

import io.homa.bench.JsonParser;

import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * {@code load-report}: merges the per-node JSON files of a Homa run and a TCP run (their
 * histograms are added, so the percentiles are those of all calls together) and writes
 * report.json, report.md (per-bucket p50/p99 slowdown, Homa vs TCP, and the TCP/Homa ratio) and
 * slowdown.svg (p99 slowdown against message size on a cumulative-fraction axis, log y).
 * Slowdowns are given against the shared base (the smaller unloaded RTT) and against each
 * protocol's own; beside every protocol stand the fractions of calls and bytes completed, the
 * failures, the CPU-late sends, and marks for a run that measured the CPU ({@link SendLateness})
 * or a protocol that did not carry the offered load.
 * With {@code --sweep DIR...} it instead summarises the report.json of several loads (sweep.md,
 * sweep.json): completed vs offered rate per load, and the highest load each protocol sustains.
 * With {@code --runs DIR,...} it gives the range of each figure over several experiment runs
 * ({@link RunRanges}).
 */
@Command(name = "load-report", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Merges load-node results of Homa and TCP into report.json, report.md and slowdown.svg.")
public final class LoadReportCommand implements Callable<Integer> {
    /** A protocol "keeps up" while it completes at least this fraction of the offered calls and bytes. */
    static final double SUSTAINED = 0.95;

    @Option(names = "--homa", split = ",", paramLabel = "DIR|FILE", description = "Homa node results (folders or files).") List<Path> homa = new ArrayList<>();
    @Option(names = "--tcp", split = ",", paramLabel = "DIR|FILE", description = "TCP node results (folders or files).") List<Path> tcp = new ArrayList<>();
    @Option(names = "--title", description = "Chart and report title.") String title;
    @Option(names = "--sweep", arity = "1..*", paramLabel = "DIR", description = "Summarise these report folders instead.") List<Path> sweep = new ArrayList<>();
    @Option(names = "--runs", split = ",", paramLabel = "DIR", description = "Several runs of scripts/experiment (their --out folders): the min-max of each figure per load (runs.md, runs.json).") List<Path> runsDirs = new ArrayList<>();
    @Option(names = "--out", required = true, paramLabel = "DIR") Path out;

    public static int execute(String[] args) {
        CommandLine cl = new CommandLine(new LoadReportCommand());
        cl.setOut(new PrintWriter(System.out, true));
        cl.setErr(new PrintWriter(System.err, true));
        return cl.execute(args);
    }

    @Override
    public Integer call() throws IOException {
        Files.createDirectories(out);
        if (!runsDirs.isEmpty()) {
            return RunRanges.write(runsDirs, out);
        }
        if (!sweep.isEmpty()) {
            return sweep();
        }
        Map<String, Merged> runs = new LinkedHashMap<>();
        if (!homa.isEmpty()) {
            runs.put("homa", merge(files(homa)));
        }
        if (!tcp.isEmpty()) {
            runs.put("tcp", merge(files(tcp)));
        }
        if (runs.isEmpty()) {
            System.err.println("load-report: give --homa and/or --tcp, --sweep or --runs");
            return 2;
        }
        Map<String, Object> report = report(runs, title);
        @SuppressWarnings("unchecked")
        List<Object> comparison = (List<Object>) report.get("comparison");
        String t = (String) report.get("title");
        LoadNodeCommand.write(out.resolve("report.json"), report);
        String md = markdown(report, runs);
        Files.writeString(out.resolve("report.md"), md, StandardCharsets.UTF_8);
        Files.writeString(out.resolve("slowdown.svg"), chart(t, runs, comparison), StandardCharsets.UTF_8);
        System.out.print(md);
        return 0;
    }

    /** The report's JSON: settings, both bases, each protocol's merged results, the per-bucket comparison. */
    static Map<String, Object> report(Map<String, Merged> runs, String title) {
        Merged first = runs.values().iterator().next();
        Map<String, Object> settings = first.settings();
        double linkGbps = num(settings.get("linkGbps"));
        double gbps = num(settings.get("gbps"));
        String t = title != null ? title : String.format(Locale.ROOT, "%s, %d nodes, load %.0f%% of %s Gbit/s links",
                String.valueOf(settings.get("workload")).toUpperCase(Locale.ROOT), first.files.size(), 100 * gbps / linkGbps, fmt(linkGbps));

        Map<String, Object> report = new LinkedHashMap<>();
        report.put("title", t);
        report.put("load", gbps / linkGbps);
        report.put("settings", settings);
        report.put("baseRttUs", num(settings.get("baseRttUs")));
        Map<String, Object> unloaded = new LinkedHashMap<>();
        runs.forEach((p, m) -> unloaded.put(p, m.unloadedRttUs()));
        report.put("unloadedRttUs", unloaded);
        report.put("cpuLateLimit", SendLateness.CPU_LATE_LIMIT);
        report.put("sustainedFraction", SUSTAINED);
        boolean valid = true;
        Map<String, Object> protocols = new LinkedHashMap<>();
        for (Map.Entry<String, Merged> e : runs.entrySet()) {
            protocols.put(e.getKey(), e.getValue().json());
            valid &= e.getValue().validCpu();
        }
        report.put("valid", valid);
        report.put("protocols", protocols);
        List<Object> comparison = new ArrayList<>();
        Merged h = runs.get("homa");
        Merged c = runs.get("tcp");
        for (int k = 0; k < 10; k++) {
            Merged any = h != null ? h : c;
            if (any.rtt[k].getTotalCount() == 0 && (c == null || c.rtt[k].getTotalCount() == 0)) {
                continue;
            }
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("bucket", k + 1);
            row.put("minLength", any.meta(k).get("minLength"));
            row.put("maxLength", any.meta(k).get("maxLength"));
            row.put("cdf", any.meta(k).get("cdf"));
            for (Map.Entry<String, Merged> e : runs.entrySet()) {
                Merged m = e.getValue();
                row.put(e.getKey() + "Count", m.rtt[k].getTotalCount());
                row.put(e.getKey() + "P50Slowdown", LoadRecorder.pct(m.slowdown[k], 50, LoadRecorder.SLOWDOWN_SCALE));
                row.put(e.getKey() + "P99Slowdown", LoadRecorder.pct(m.slowdown[k], 99, LoadRecorder.SLOWDOWN_SCALE));
                row.put(e.getKey() + "P50OwnSlowdown", LoadRecorder.pct(m.ownSlowdown[k], 50, LoadRecorder.SLOWDOWN_SCALE));
                row.put(e.getKey() + "P99OwnSlowdown", LoadRecorder.pct(m.ownSlowdown[k], 99, LoadRecorder.SLOWDOWN_SCALE));
                row.put(e.getKey() + "P99RttUs", LoadRecorder.pct(m.rtt[k], 99, 1000));
            }
            if (h != null && c != null) {
                row.put("tcpOverHomaP50", num(row.get("tcpP50Slowdown")) / num(row.get("homaP50Slowdown")));
                row.put("tcpOverHomaP99", num(row.get("tcpP99Slowdown")) / num(row.get("homaP99Slowdown")));
            }
            comparison.add(row);
        }
        report.put("comparison", comparison);
        return report;
    }

    private static List<Path> files(List<Path> args) throws IOException {
        List<Path> files = new ArrayList<>();
        for (Path p : args) {
            if (Files.isDirectory(p)) {
                try (Stream<Path> s = Files.list(p)) {
                    s.filter(f -> f.getFileName().toString().endsWith(".json")
                                    && !f.getFileName().toString().startsWith("calibrat")
                                    && !f.getFileName().toString().equals("report.json"))
                            .sorted().forEach(files::add);
                }
            } else {
                files.add(p);
            }
        }
        if (files.isEmpty()) {
            throw new IOException("no result files in " + args);
        }
        return files;
    }

    static double num(Object o) {
        return o instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    /** The nodes of one protocol, merged. */
    static final class Merged {
        /** Summary counters added over the nodes; the rest of the summary is recomputed. */
        static final List<String> SUMMED = List.of("offeredCalls", "offeredCallsPerS", "offeredGbps", "completedCalls",
                "completedCallsPerS", "completedGbps", "offeredBytes", "completedBytes", "failures", "failed", "unfinished", "sendsLateOver1ms",
                "sendsCpuLateOver1ms", "sendsInCallLateOver1ms", "sendsObservedInTransport", "sendsIoThreadLateOver1ms",
                "sendsHeldByTransportOver1ms", "lateWaitingForCpu", "lateInGc", "lateWokenLate", "lateInBacklogOfThese",
                "lateRunQueueMs", "lateGcMs", "lateWokenLateMs");
        /** Summary values taken as the worst over the nodes (the machine's shares: the same machine, the largest read). */
        static final List<String> MAXED = List.of("maxSendLagUs", "maxCpuLagUs", "maxHeldByTransportUs", "cpuLateFraction",
                "clientStartLagMs", "machineSoftirqShare", "machineStealShare", "machineIdleShare");

        final List<Map<String, Object>> files = new ArrayList<>();
        final Histogram[] rtt = new Histogram[10];
        final Histogram[] slowdown = new Histogram[10];
        final Histogram[] ownSlowdown = new Histogram[10];
        final Map<String, Double> sums = new LinkedHashMap<>();
        final Map<String, Double> maxes = new LinkedHashMap<>();
        /** The transports' counters (Homa: engine and shell), added over the nodes. */
        final Map<String, Double> counters = new TreeMap<>();
        /** The same over each node's measured interval only, added over the nodes (see {@link MeasuredCounters}). */
        final Map<String, Double> measured = new TreeMap<>();
        /** The nodes' measured intervals, added (node-seconds). */
        double measuredSeconds;

        /** GRANT packets sent per DATA packet sent, over the measured intervals (whole runs for older results). */
        double grantsPerData() {
            Map<String, Double> c = measuredSeconds > 0 ? measured : counters;
            return c.getOrDefault("PACKETS_SENT_GRANT", 0.0) / c.getOrDefault("PACKETS_SENT_DATA", Double.NaN);
        }

        /** A counter per node per second of the measured interval (NaN for results without it). */
        double perNodePerSecond(String counter) {
            return measuredSeconds > 0 ? measured.getOrDefault(counter, 0.0) / measuredSeconds : Double.NaN;
        }

        /** How late the pacer's wake-ups came on average, in us (NaN without any). */
        double pacerWakeupLateUs() {
            Map<String, Double> c = measuredSeconds > 0 ? measured : counters;
            return c.getOrDefault("PACER_WAKEUP_LATE_NANOS", 0.0) / c.getOrDefault("PACER_WAKEUPS", Double.NaN) / 1000;
        }

        /** Whether the nodes reported Homa's packet counters (the TCP transport has none). */
        boolean hasPacketCounters() {
            return counters.containsKey("PACKETS_SENT_DATA");
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> meta(int k) {
            return (Map<String, Object>) ((List<Object>) files.get(0).get("buckets")).get(k);
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> settings() {
            return (Map<String, Object>) files.get(0).get("settings");
        }

        double sum(String key) {
            return sums.getOrDefault(key, 0.0);
        }

        double callsFraction() {
            return sum("completedCalls") / sum("offeredCalls");
        }

        /** From the exact byte counts; results without them from the rounded Gbit/s. */
        double bytesFraction() {
            return sum("offeredBytes") > 0 ? sum("completedBytes") / sum("offeredBytes") : sum("completedGbps") / sum("offeredGbps");
        }

        /** CPU-late sends over all nodes' measured sends. */
        double cpuLateFraction() {
            return sum("offeredCalls") == 0 ? 0 : sum("sendsCpuLateOver1ms") / sum("offeredCalls");
        }

        /** Whether the sends were on time (see {@link SendLateness}); results without the counter count as valid. */
        boolean validCpu() {
            return SendLateness.valid(cpuLateFraction());
        }

        /** Whether this protocol carried the offered load: calls and bytes completed at least {@link #SUSTAINED}. */
        boolean carried() {
            return callsFraction() >= SUSTAINED && bytesFraction() >= SUSTAINED;
        }

        /** This protocol's own unloaded RTT of the smallest message (NaN when the nodes were not told). */
        double unloadedRttUs() {
            double v = num(settings().get("ownBaseRttUs"));
            return v > 0 ? v : Double.NaN;
        }

        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("nodes", files.size());
            Map<String, Object> s = new LinkedHashMap<>();
            for (String key : SUMMED) {
                s.put(key, sum(key));
            }
            maxes.forEach((k, v) -> s.put(k.equals("cpuLateFraction") ? "worstNodeCpuLateFraction" : k, v));
            s.put("completedOverOffered", callsFraction());
            s.put("completedBytesOverOffered", bytesFraction());
            s.put("carriedOfferedLoad", carried());
            s.put("cpuLateFraction", cpuLateFraction());
            s.put("validCpu", validCpu());
            s.put("unloadedRttUs", unloadedRttUs());
            s.put("shortP50Slowdown", LoadRecorder.pct(slowdown[0], 50, LoadRecorder.SLOWDOWN_SCALE));
            s.put("shortP99Slowdown", LoadRecorder.pct(slowdown[0], 99, LoadRecorder.SLOWDOWN_SCALE));
            s.put("shortP50OwnSlowdown", LoadRecorder.pct(ownSlowdown[0], 50, LoadRecorder.SLOWDOWN_SCALE));
            s.put("shortP99OwnSlowdown", LoadRecorder.pct(ownSlowdown[0], 99, LoadRecorder.SLOWDOWN_SCALE));
            s.put("shortP50RttUs", LoadRecorder.pct(rtt[0], 50, 1000));
            s.put("shortP99RttUs", LoadRecorder.pct(rtt[0], 99, 1000));
            if (hasPacketCounters()) {
                s.put("grantsPerData", grantsPerData());
                s.put("pacerHoldsPerNodePerS", perNodePerSecond("PACER_HOLDS"));
                s.put("pacerWakeupsPerNodePerS", perNodePerSecond("PACER_WAKEUPS"));
                s.put("pacerWakeupLateUs", pacerWakeupLateUs());
                s.put("receiveDeferredPerNodePerS", perNodePerSecond("shell.RECEIVE_DEFERRED"));
            }
            m.put("summary", s);
            m.put("transportMetrics", new LinkedHashMap<>(counters));
            if (measuredSeconds > 0) {
                m.put("measuredMetricsNodeSeconds", measuredSeconds);
                m.put("transportMetricsMeasured", new LinkedHashMap<>(measured));
            }
            List<Object> buckets = new ArrayList<>();
            for (int k = 0; k < 10; k++) {
                Map<String, Object> b = new LinkedHashMap<>();
                b.put("bucket", k + 1);
                b.put("minLength", meta(k).get("minLength"));
                b.put("maxLength", meta(k).get("maxLength"));
                b.put("cdf", meta(k).get("cdf"));
                LoadRecorder.bucketStats(b, rtt[k], slowdown[k], ownSlowdown[k]);
                buckets.add(b);
            }
            m.put("buckets", buckets);
            return m;
        }
    }

    @SuppressWarnings("unchecked")
    static Merged merge(List<Path> files) throws IOException {
        Merged m = new Merged();
        for (int k = 0; k < 10; k++) {
            m.rtt[k] = LoadRecorder.newRtt();
            m.slowdown[k] = LoadRecorder.newSlowdown();
            m.ownSlowdown[k] = LoadRecorder.newSlowdown();
        }
        for (Path f : files) {
            Map<String, Object> j = (Map<String, Object>) JsonParser.parse(Files.readString(f, StandardCharsets.UTF_8));
            m.files.add(j);
            Map<String, Object> s = (Map<String, Object>) j.get("summary");
            for (Map.Entry<String, Object> e : s.entrySet()) {
                if (e.getValue() instanceof Number n) {
                    if (Merged.MAXED.contains(e.getKey())) {
                        m.maxes.merge(e.getKey(), n.doubleValue(), Math::max);
                    } else {
                        m.sums.merge(e.getKey(), n.doubleValue(), Double::sum);
                    }
                }
            }
            addCounters(j.get("transportMetrics"), m.counters);
            if (j.get("measuredMetricsS") instanceof Number seconds && addCounters(j.get("transportMetricsMeasured"), m.measured)) {
                m.measuredSeconds += seconds.doubleValue();
            }
            List<Object> buckets = (List<Object>) j.get("buckets");
            for (int k = 0; k < 10; k++) {
                Map<String, Object> b = (Map<String, Object>) buckets.get(k);
                m.rtt[k].add(LoadRecorder.decode((String) b.get("rttHistogram")));
                m.slowdown[k].add(LoadRecorder.decode((String) b.get("slowdownHistogram")));
                if (b.get("ownSlowdownHistogram") instanceof String own) {
                    m.ownSlowdown[k].add(LoadRecorder.decode(own));
                }
            }
        }
        return m;
    }

    /** Adds a node's counters ({@code json}, a map of numbers) into {@code into}; false when it is not a map. */
    private static boolean addCounters(Object json, Map<String, Double> into) {
        if (!(json instanceof Map<?, ?> tm)) {
            return false;
        }
        tm.forEach((k, v) -> {
            if (v instanceof Number n) {
                into.merge(String.valueOf(k), n.doubleValue(), Double::sum);
            }
        });
        return true;
    }

    /** A share of the machine's time as a percentage, "n/a" when not recorded. */
    private static String share(Object v) {
        return v instanceof Number n ? String.format(Locale.ROOT, "%.1f%%", 100 * n.doubleValue()) : "n/a";
    }

    static String fmt(double v) {
        if (!Double.isFinite(v)) {
            return "-";
        }
        if (v >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (v >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    /** What a reader must know before trusting a protocol's curve: empty when nothing is wrong. */
    static String verdict(boolean validCpu, boolean carried, double cpuLateFraction) {
        List<String> v = new ArrayList<>();
        if (!validCpu) {
            v.add(String.format(Locale.ROOT, "INVALID: measures the CPU (%.2f%% of sends > 1 ms late for want of CPU, limit %.0f%%)",
                    100 * cpuLateFraction, 100 * SendLateness.CPU_LATE_LIMIT));
        }
        if (!carried) {
            v.add(String.format(Locale.ROOT, "DID NOT CARRY THE OFFERED LOAD (< %.0f%% of calls or bytes)", 100 * SUSTAINED));
        }
        return String.join("; ", v);
    }

    private static String protocolName(String p) {
        return p.equals("homa") ? "Homa" : p.equals("tcp") ? "TCP" : p;
    }

    static String markdown(Map<String, Object> report, Map<String, Merged> runs) {
        @SuppressWarnings("unchecked")
        Map<String, Object> settings = (Map<String, Object>) report.get("settings");
        @SuppressWarnings("unchecked")
        List<Object> comparison = (List<Object>) report.get("comparison");
        StringBuilder sb = new StringBuilder();
        sb.append("### ").append(report.get("title")).append("\n\n");
        sb.append(String.format(Locale.ROOT, "Workload %s%s, %s Gbit/s offered per node, links %s Gbit/s, %s responses, %s s measured.",
                settings.get("workload"), num(settings.get("truncate")) > 0 ? " truncated at " + (long) num(settings.get("truncate")) + " B" : "",
                fmt(num(settings.get("gbps"))), fmt(num(settings.get("linkGbps"))),
                Boolean.TRUE.equals(settings.get("oneWay")) ? "100 B" : "request-sized", fmt(num(settings.get("durationS")))));
        sb.append(String.format(Locale.ROOT, " Unloaded RTT of the smallest message: %s; shared slowdown base %s us (the smaller).%n%n",
                String.join(", ", runs.entrySet().stream().map(e -> protocolName(e.getKey()) + " " + fmt(e.getValue().unloadedRttUs()) + " us").toList()),
                fmt(num(report.get("baseRttUs")))));
        if (!Boolean.TRUE.equals(report.get("valid"))) {
            sb.append("**This run is not valid: the load generator did not get the CPU on time (see the CPU-late column); it measured the machine, not the network.**\n\n");
        }
        sb.append("| protocol | nodes | offered Gbit/s | completed Gbit/s | completed/offered calls | completed/offered bytes | failures"
                + " | CPU-late sends | TCP sends held > 1 ms | short p50 / p99 slowdown | short p50 / p99 own-base slowdown | short p99 RTT us | verdict |\n");
        sb.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Map.Entry<String, Merged> e : runs.entrySet()) {
            Merged m = e.getValue();
            String held = m.sum("sendsObservedInTransport") > 0 ? String.format(Locale.ROOT, "%.1f%%",
                    100 * m.sum("sendsHeldByTransportOver1ms") / m.sum("sendsObservedInTransport")) : "n/a";
            String v = verdict(m.validCpu(), m.carried(), m.cpuLateFraction());
            sb.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %.3f | %.3f | %d | %.2f%% | %s | %s / %s | %s / %s | %s | %s |%n",
                    e.getKey(), m.files.size(), fmt(m.sum("offeredGbps")), fmt(m.sum("completedGbps")), m.callsFraction(), m.bytesFraction(),
                    (long) m.sum("failures"), 100 * m.cpuLateFraction(), held,
                    fmt(LoadRecorder.pct(m.slowdown[0], 50, LoadRecorder.SLOWDOWN_SCALE)), fmt(LoadRecorder.pct(m.slowdown[0], 99, LoadRecorder.SLOWDOWN_SCALE)),
                    fmt(LoadRecorder.pct(m.ownSlowdown[0], 50, LoadRecorder.SLOWDOWN_SCALE)), fmt(LoadRecorder.pct(m.ownSlowdown[0], 99, LoadRecorder.SLOWDOWN_SCALE)),
                    fmt(LoadRecorder.pct(m.rtt[0], 99, 1000)), v.isEmpty() ? "ok" : "**" + v + "**"));
        }
        for (Map.Entry<String, Merged> e : runs.entrySet()) {
            Merged m = e.getValue();
            if (m.sum("lateWaitingForCpu") + m.sum("lateInGc") + m.sum("lateWokenLate") > 0) {
                sb.append(String.format(Locale.ROOT, "%n%s's sends more than 1 ms late, by the largest part of the wait before them"
                                + " (SendLateness.cause): waiting on a run queue %d, in a GC pause %d, woken late (timer, safepoint or"
                                + " the VM not running) %d; %d of them sent at once after such a stall. Machine over the interval:"
                                + " softirq %s, steal %s, idle %s.%n",
                        protocolName(e.getKey()), (long) m.sum("lateWaitingForCpu"), (long) m.sum("lateInGc"),
                        (long) m.sum("lateWokenLate"), (long) m.sum("lateInBacklogOfThese"), share(m.maxes.get("machineSoftirqShare")),
                        share(m.maxes.get("machineStealShare")), share(m.maxes.get("machineIdleShare"))));
            }
        }
        for (Map.Entry<String, Merged> e : runs.entrySet()) {
            Merged m = e.getValue();
            if (m.hasPacketCounters()) {
                sb.append(String.format(Locale.ROOT, "%n%s's counters%s: GRANT/DATA packets sent %s; per node per second: pacer holds %s,"
                                + " pacer wake-ups %s (late by %s us on average), long-message datagrams deferred on receive %s.%n",
                        protocolName(e.getKey()), m.measuredSeconds > 0 ? " over the measured interval" : " (whole run)",
                        fmt(m.grantsPerData()), fmt(m.perNodePerSecond("PACER_HOLDS")), fmt(m.perNodePerSecond("PACER_WAKEUPS")),
                        fmt(m.pacerWakeupLateUs()), fmt(m.perNodePerSecond("shell.RECEIVE_DEFERRED"))));
            }
        }
        boolean both = runs.size() == 2;
        sb.append("\n| bucket | sizes (B) | CDF | calls (homa/tcp) | Homa p50 | Homa p99 | TCP p50 | TCP p99 |")
                .append(both ? " TCP/Homa p50 | TCP/Homa p99 |" : "").append(" Homa p99 own base | TCP p99 own base |\n");
        sb.append("|---|---|---|---|---|---|---|---|").append(both ? "---|---|" : "").append("---|---|\n");
        for (Object o : comparison) {
            @SuppressWarnings("unchecked")
            Map<String, Object> r = (Map<String, Object>) o;
            sb.append(String.format(Locale.ROOT, "| %d | %s-%s | %.2f | %s/%s | %s | %s | %s | %s |", ((Number) r.get("bucket")).intValue(),
                    SlowdownChart.size(num(r.get("minLength"))), SlowdownChart.size(num(r.get("maxLength"))), num(r.get("cdf")),
                    cnt(r.get("homaCount")), cnt(r.get("tcpCount")),
                    fmt(num(r.get("homaP50Slowdown"))), fmt(num(r.get("homaP99Slowdown"))),
                    fmt(num(r.get("tcpP50Slowdown"))), fmt(num(r.get("tcpP99Slowdown")))));
            if (both) {
                sb.append(String.format(Locale.ROOT, " %s | %s |", fmt(num(r.get("tcpOverHomaP50"))), fmt(num(r.get("tcpOverHomaP99")))));
            }
            sb.append(String.format(Locale.ROOT, " %s | %s |%n", fmt(num(r.get("homaP99OwnSlowdown"))), fmt(num(r.get("tcpP99OwnSlowdown")))));
        }
        sb.append("\nSlowdowns are RTT / (base RTT + length x 8 / link rate), with the shared base (the smaller unloaded RTT)"
                + " unless marked \"own base\" (the protocol's own unloaded RTT); bucket 1 holds the shortest 10% of messages."
                + String.format(Locale.ROOT, " CPU-late: the load generator called the transport more than 1 ms after the send's scheduled time"
                + " because its thread did not run; a run is invalid above %.0f%% of sends. TCP sends held: after the event loop took the request up,"
                + " its first byte waited more than 1 ms behind earlier bytes on its connection (a full socket send buffer), part of TCP's"
                + " latency; Homa's own queues are not visible per call. A protocol that completed less than %.0f%% of its offered calls or bytes did not carry the load, and its"
                + " slowdowns describe only the calls that completed.%n", 100 * SendLateness.CPU_LATE_LIMIT, 100 * SUSTAINED));
        return sb.toString();
    }

    private static String cnt(Object o) {
        return o == null ? "-" : String.valueOf((long) num(o));
    }

    private static String chart(String title, Map<String, Merged> runs, List<Object> comparison) {
        double[] tickX = new double[comparison.size()];
        String[] labels = new String[comparison.size()];
        List<SlowdownChart.Series> series = new ArrayList<>();
        List<SlowdownChart.Note> notes = new ArrayList<>();
        for (int i = 0; i < comparison.size(); i++) {
            @SuppressWarnings("unchecked")
            Map<String, Object> r = (Map<String, Object>) comparison.get(i);
            tickX[i] = num(r.get("cdf"));
            labels[i] = SlowdownChart.size(num(r.get("maxLength")));
        }
        for (Map.Entry<String, Merged> e : runs.entrySet()) {
            String p = e.getKey();
            Merged m = e.getValue();
            String color = p.equals("homa") ? "#1f77b4" : "#d62728";
            String name = protocolName(p);
            String v = verdict(m.validCpu(), m.carried(), m.cpuLateFraction());
            String mark = v.isEmpty() ? "" : " (!)";
            series.add(new SlowdownChart.Series(name + " p99" + mark, color, tickX, column(comparison, p + "P99Slowdown"), false));
            if (Double.isFinite(m.unloadedRttUs())) {
                series.add(new SlowdownChart.Series(name + " p99, own base " + fmt(m.unloadedRttUs()) + " us" + mark, color, tickX,
                        column(comparison, p + "P99OwnSlowdown"), true));
            }
            notes.add(new SlowdownChart.Note(String.format(Locale.ROOT, "%s: completed %.3f of calls, %.3f of bytes, %d failures, %.1f%% sends CPU-late",
                    name, m.callsFraction(), m.bytesFraction(), (long) m.sum("failures"), 100 * m.cpuLateFraction()), false));
            if (!v.isEmpty()) {
                for (String part : v.split("; ")) { // one line each: the chart is 760 px wide
                    notes.add(new SlowdownChart.Note("(!) " + name + ": " + part, true));
                }
            }
        }
        return SlowdownChart.svg(title, series, tickX, labels, notes);
    }

    private static double[] column(List<Object> rows, String key) {
        double[] y = new double[rows.size()];
        for (int i = 0; i < y.length; i++) {
            @SuppressWarnings("unchecked")
            Map<String, Object> r = (Map<String, Object>) rows.get(i);
            y[i] = num(r.get(key));
        }
        return y;
    }

    @SuppressWarnings("unchecked")
    private int sweep() throws IOException {
        List<Object> rows = new ArrayList<>();
        StringBuilder md = new StringBuilder("| load | protocol | offered Gbit/s | completed Gbit/s | completed/offered calls | completed/offered bytes"
                + " | failures | short p99 slowdown | short p99 own-base slowdown | CPU-late sends | GRANT/DATA | pacer holds/s per node"
                + " | pacer wake-ups/s per node | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        Map<String, Double> highest = new LinkedHashMap<>();
        for (Path dir : sweep) {
            Map<String, Object> r = (Map<String, Object>) JsonParser.parse(Files.readString(dir.resolve("report.json"), StandardCharsets.UTF_8));
            double load = num(r.get("load"));
            Map<String, Object> protocols = (Map<String, Object>) r.get("protocols");
            for (Map.Entry<String, Object> e : protocols.entrySet()) {
                Map<String, Object> s = (Map<String, Object>) ((Map<String, Object>) e.getValue()).get("summary");
                double ratio = num(s.get("completedOverOffered"));
                // Bytes too: with heavy-tailed sizes, a protocol can finish 99% of the calls while
                // the few largest messages, most of the bytes, fall behind.
                double byteRatio = s.containsKey("completedBytesOverOffered") ? num(s.get("completedBytesOverOffered")) : ratio;
                boolean kept = ratio >= SUSTAINED && byteRatio >= SUSTAINED
                        && num(s.get("failures")) <= 0.01 * num(s.get("offeredCalls"));
                if (kept) {
                    highest.merge(e.getKey(), load, Math::max);
                } else {
                    highest.putIfAbsent(e.getKey(), 0.0);
                }
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("load", load);
                row.put("protocol", e.getKey());
                row.putAll(s);
                row.put("sustained", kept);
                rows.add(row);
                double cpuLate = num(s.get("cpuLateFraction"));
                // The report's own judgement, made on the exact fraction: the JSON keeps three
                // decimals, so 1.05% reads back as 0.01, which is within the limit.
                boolean validCpu = s.get("validCpu") instanceof Boolean b ? b : !Double.isFinite(cpuLate) || SendLateness.valid(cpuLate);
                String v = verdict(validCpu, ratio >= SUSTAINED && byteRatio >= SUSTAINED, cpuLate);
                md.append(String.format(Locale.ROOT, "| %.0f%% | %s | %s | %s | %.3f | %.3f | %d | %s | %s | %s | %s | %s | %s | %s |%n", 100 * load, e.getKey(), fmt(num(s.get("offeredGbps"))),
                        fmt(num(s.get("completedGbps"))), ratio, byteRatio, (long) num(s.get("failures")), fmt(num(s.get("shortP99Slowdown"))),
                        fmt(num(s.get("shortP99OwnSlowdown"))), Double.isFinite(cpuLate) ? String.format(Locale.ROOT, "%.2f%%", 100 * cpuLate) : "-",
                        fmt(num(s.get("grantsPerData"))), fmt(num(s.get("pacerHoldsPerNodePerS"))), fmt(num(s.get("pacerWakeupsPerNodePerS"))),
                        v.isEmpty() ? "ok" : "**" + v + "**"));
            }
        }
        md.append("\nHighest load sustained (completed calls and bytes >= ").append((int) (SUSTAINED * 100)).append("% of offered, failures <= 1%): ");
        List<String> parts = new ArrayList<>();
        highest.forEach((p, l) -> parts.add(String.format(Locale.ROOT, "%s %.0f%%", p, 100 * l)));
        md.append(String.join(", ", parts)).append(".\n");
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("rows", rows);
        json.put("highestSustainedLoad", highest);
        LoadNodeCommand.write(out.resolve("sweep.json"), json);
        Files.writeString(out.resolve("sweep.md"), md.toString(), StandardCharsets.UTF_8);
        System.out.print(md);
        return 0;
    }
}
