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
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * {@code load-report}: merges the per-node JSON files of a Homa run and a TCP run (their
 * histograms are added, so the percentiles are those of all calls together) and writes
 * report.json, report.md (per-bucket p50/p99 slowdown, Homa vs TCP, and the TCP/Homa ratio) and
 * slowdown.svg (p99 slowdown against message size on a cumulative-fraction axis, log y).
 * With {@code --sweep DIR...} it instead summarises the report.json of several loads (sweep.md,
 * sweep.json): completed vs offered rate per load, and the highest load each protocol sustains.
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
            System.err.println("load-report: give --homa and/or --tcp");
            return 2;
        }
        Merged first = runs.values().iterator().next();
        @SuppressWarnings("unchecked")
        Map<String, Object> settings = (Map<String, Object>) first.files.get(0).get("settings");
        double linkGbps = num(settings.get("linkGbps"));
        double gbps = num(settings.get("gbps"));
        String t = title != null ? title : String.format(Locale.ROOT, "%s, %d nodes, load %.0f%% of %s Gbit/s links",
                String.valueOf(settings.get("workload")).toUpperCase(Locale.ROOT), first.files.size(), 100 * gbps / linkGbps, fmt(linkGbps));

        Map<String, Object> report = new LinkedHashMap<>();
        report.put("title", t);
        report.put("load", gbps / linkGbps);
        report.put("settings", settings);
        Map<String, Object> protocols = new LinkedHashMap<>();
        for (Map.Entry<String, Merged> e : runs.entrySet()) {
            protocols.put(e.getKey(), e.getValue().json());
        }
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
                row.put(e.getKey() + "Count", e.getValue().rtt[k].getTotalCount());
                row.put(e.getKey() + "P50Slowdown", LoadRecorder.pct(e.getValue().slowdown[k], 50, LoadRecorder.SLOWDOWN_SCALE));
                row.put(e.getKey() + "P99Slowdown", LoadRecorder.pct(e.getValue().slowdown[k], 99, LoadRecorder.SLOWDOWN_SCALE));
                row.put(e.getKey() + "P99RttUs", LoadRecorder.pct(e.getValue().rtt[k], 99, 1000));
            }
            if (h != null && c != null) {
                row.put("tcpOverHomaP50", num(row.get("tcpP50Slowdown")) / num(row.get("homaP50Slowdown")));
                row.put("tcpOverHomaP99", num(row.get("tcpP99Slowdown")) / num(row.get("homaP99Slowdown")));
            }
            comparison.add(row);
        }
        report.put("comparison", comparison);
        LoadNodeCommand.write(out.resolve("report.json"), report);
        Files.writeString(out.resolve("report.md"), markdown(t, settings, runs, comparison), StandardCharsets.UTF_8);
        Files.writeString(out.resolve("slowdown.svg"), chart(t, runs, comparison), StandardCharsets.UTF_8);
        System.out.print(markdown(t, settings, runs, comparison));
        return 0;
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
        final List<Map<String, Object>> files = new ArrayList<>();
        final Histogram[] rtt = new Histogram[10];
        final Histogram[] slowdown = new Histogram[10];
        final Map<String, Double> sums = new LinkedHashMap<>();

        @SuppressWarnings("unchecked")
        Map<String, Object> meta(int k) {
            return (Map<String, Object>) ((List<Object>) files.get(0).get("buckets")).get(k);
        }

        double sum(String key) {
            return sums.getOrDefault(key, 0.0);
        }

        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("nodes", files.size());
            Map<String, Object> s = new LinkedHashMap<>();
            for (String key : List.of("offeredCalls", "offeredCallsPerS", "offeredGbps", "completedCalls", "completedCallsPerS",
                    "completedGbps", "failures", "failed", "unfinished", "sendsLateOver1ms")) {
                s.put(key, sum(key));
            }
            s.put("completedOverOffered", sum("completedCalls") / sum("offeredCalls"));
            s.put("completedBytesOverOffered", sum("completedGbps") / sum("offeredGbps"));
            s.put("shortP50Slowdown", LoadRecorder.pct(slowdown[0], 50, LoadRecorder.SLOWDOWN_SCALE));
            s.put("shortP99Slowdown", LoadRecorder.pct(slowdown[0], 99, LoadRecorder.SLOWDOWN_SCALE));
            s.put("shortP50RttUs", LoadRecorder.pct(rtt[0], 50, 1000));
            s.put("shortP99RttUs", LoadRecorder.pct(rtt[0], 99, 1000));
            m.put("summary", s);
            List<Object> buckets = new ArrayList<>();
            for (int k = 0; k < 10; k++) {
                Map<String, Object> b = new LinkedHashMap<>();
                b.put("bucket", k + 1);
                b.put("minLength", meta(k).get("minLength"));
                b.put("maxLength", meta(k).get("maxLength"));
                b.put("cdf", meta(k).get("cdf"));
                LoadRecorder.bucketStats(b, rtt[k], slowdown[k]);
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
        }
        for (Path f : files) {
            Map<String, Object> j = (Map<String, Object>) JsonParser.parse(Files.readString(f, StandardCharsets.UTF_8));
            m.files.add(j);
            Map<String, Object> s = (Map<String, Object>) j.get("summary");
            for (Map.Entry<String, Object> e : s.entrySet()) {
                if (e.getValue() instanceof Number n) {
                    m.sums.merge(e.getKey(), n.doubleValue(), Double::sum);
                }
            }
            List<Object> buckets = (List<Object>) j.get("buckets");
            for (int k = 0; k < 10; k++) {
                Map<String, Object> b = (Map<String, Object>) buckets.get(k);
                m.rtt[k].add(LoadRecorder.decode((String) b.get("rttHistogram")));
                m.slowdown[k].add(LoadRecorder.decode((String) b.get("slowdownHistogram")));
            }
        }
        return m;
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

    private static String markdown(String title, Map<String, Object> settings, Map<String, Merged> runs, List<Object> comparison) {
        StringBuilder sb = new StringBuilder();
        sb.append("### ").append(title).append("\n\n");
        sb.append(String.format(Locale.ROOT, "Workload %s%s, %s Gbit/s of requests offered per node, links %s Gbit/s, base RTT %s us, %s responses, %s s measured.%n%n",
                settings.get("workload"), num(settings.get("truncate")) > 0 ? " truncated at " + (long) num(settings.get("truncate")) + " B" : "",
                fmt(num(settings.get("gbps"))), fmt(num(settings.get("linkGbps"))), fmt(num(settings.get("baseRttUs"))),
                Boolean.TRUE.equals(settings.get("oneWay")) ? "100 B" : "request-sized", fmt(num(settings.get("durationS")))));
        sb.append("| protocol | nodes | offered Gbit/s | completed Gbit/s | completed/offered calls | failures | short p50 slowdown | short p99 slowdown | short p99 RTT us |\n");
        sb.append("|---|---|---|---|---|---|---|---|---|\n");
        for (Map.Entry<String, Merged> e : runs.entrySet()) {
            Merged m = e.getValue();
            sb.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %.3f | %d | %s | %s | %s |%n", e.getKey(), m.files.size(),
                    fmt(m.sum("offeredGbps")), fmt(m.sum("completedGbps")), m.sum("completedCalls") / m.sum("offeredCalls"),
                    (long) m.sum("failures"), fmt(LoadRecorder.pct(m.slowdown[0], 50, LoadRecorder.SLOWDOWN_SCALE)),
                    fmt(LoadRecorder.pct(m.slowdown[0], 99, LoadRecorder.SLOWDOWN_SCALE)), fmt(LoadRecorder.pct(m.rtt[0], 99, 1000))));
        }
        boolean both = runs.size() == 2;
        sb.append("\n| bucket | sizes (B) | CDF | calls (homa/tcp) | Homa p50 | Homa p99 | TCP p50 | TCP p99 |").append(both ? " TCP/Homa p50 | TCP/Homa p99 |" : "").append('\n');
        sb.append("|---|---|---|---|---|---|---|---|").append(both ? "---|---|" : "").append('\n');
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
            sb.append('\n');
        }
        sb.append("\nSlowdowns are RTT / (base RTT + length x 8 / link rate); bucket 1 holds the shortest 10% of messages.\n");
        return sb.toString();
    }

    private static String cnt(Object o) {
        return o == null ? "-" : String.valueOf((long) num(o));
    }

    private static String chart(String title, Map<String, Merged> runs, List<Object> comparison) {
        double[] tickX = new double[comparison.size()];
        String[] labels = new String[comparison.size()];
        List<SlowdownChart.Series> series = new ArrayList<>();
        Map<String, double[]> ys = new LinkedHashMap<>();
        for (String p : runs.keySet()) {
            ys.put(p, new double[comparison.size()]);
        }
        for (int i = 0; i < comparison.size(); i++) {
            @SuppressWarnings("unchecked")
            Map<String, Object> r = (Map<String, Object>) comparison.get(i);
            tickX[i] = num(r.get("cdf"));
            labels[i] = SlowdownChart.size(num(r.get("maxLength")));
            for (String p : runs.keySet()) {
                ys.get(p)[i] = num(r.get(p + "P99Slowdown"));
            }
        }
        for (String p : runs.keySet()) {
            series.add(new SlowdownChart.Series(p.equals("homa") ? "Homa p99" : "TCP p99", p.equals("homa") ? "#1f77b4" : "#d62728", tickX, ys.get(p)));
        }
        return SlowdownChart.svg(title, series, tickX, labels);
    }

    @SuppressWarnings("unchecked")
    private int sweep() throws IOException {
        List<Object> rows = new ArrayList<>();
        StringBuilder md = new StringBuilder("| load | protocol | offered Gbit/s | completed Gbit/s | completed/offered calls | completed/offered bytes | failures | short p99 slowdown |\n|---|---|---|---|---|---|---|---|\n");
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
                md.append(String.format(Locale.ROOT, "| %.0f%% | %s | %s | %s | %.3f | %.3f | %d | %s |%n", 100 * load, e.getKey(), fmt(num(s.get("offeredGbps"))),
                        fmt(num(s.get("completedGbps"))), ratio, byteRatio, (long) num(s.get("failures")), fmt(num(s.get("shortP99Slowdown")))));
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
