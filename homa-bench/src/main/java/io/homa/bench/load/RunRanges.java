package io.homa.bench.load;

import io.homa.bench.JsonParser;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.DoubleFunction;
import java.util.stream.Stream;

/**
 * {@code load-report --runs DIR,DIR,...}: several runs of the same experiment side by side, as the
 * range (min-max) of each figure per load and protocol, with how many runs were valid and carried
 * the load. One run is an anecdote on a shared 2-core machine; the range is what docs quote.
 * Each DIR is a {@code scripts/experiment --out} folder (its {@code load-NN/report.json} are read)
 * or a single report folder.
 */
final class RunRanges {
    /** A figure of a protocol's summary: its key, its column title and how one value prints. */
    private record Figure(String key, String title, DoubleFunction<String> format) {
    }

    private static final DoubleFunction<String> FRACTION = v -> String.format(Locale.ROOT, "%.3f", v);
    private static final DoubleFunction<String> PERCENT = v -> String.format(Locale.ROOT, "%.2f%%", 100 * v);
    private static final DoubleFunction<String> COUNT = v -> String.format(Locale.ROOT, "%d", (long) v);

    private static final List<Figure> FIGURES = List.of(
            new Figure("unloadedRttUs", "unloaded RTT us", LoadReportCommand::fmt),
            new Figure("shortP50Slowdown", "short p50 slowdown", LoadReportCommand::fmt),
            new Figure("shortP99Slowdown", "short p99 slowdown", LoadReportCommand::fmt),
            new Figure("shortP50OwnSlowdown", "short p50 own-base", LoadReportCommand::fmt),
            new Figure("shortP99OwnSlowdown", "short p99 own-base", LoadReportCommand::fmt),
            new Figure("completedOverOffered", "completed/offered calls", FRACTION),
            new Figure("completedBytesOverOffered", "completed/offered bytes", FRACTION),
            new Figure("failures", "failures", COUNT),
            new Figure("cpuLateFraction", "CPU-late sends", PERCENT));

    private RunRanges() {
    }

    /** Reads the runs, writes runs.json and runs.md into {@code out}, prints the table; returns the exit code. */
    static int write(List<Path> runs, Path out) throws IOException {
        // load -> run index -> report
        Map<Double, Map<Integer, Map<String, Object>>> byLoad = new TreeMap<>();
        for (int i = 0; i < runs.size(); i++) {
            for (Path f : reports(runs.get(i))) {
                Map<String, Object> r = parse(f);
                byLoad.computeIfAbsent(LoadReportCommand.num(r.get("load")), l -> new LinkedHashMap<>()).put(i, r);
            }
        }
        if (byLoad.isEmpty()) {
            System.err.println("load-report --runs: no report.json under " + runs);
            return 2;
        }
        Map<String, Object> json = aggregate(runs.size(), byLoad);
        json.put("runs", runs.stream().map(Path::toString).toList());
        LoadNodeCommand.write(out.resolve("runs.json"), json);
        String md = markdown(runs, json);
        Files.writeString(out.resolve("runs.md"), md, StandardCharsets.UTF_8);
        System.out.print(md);
        return 0;
    }

    private static List<Path> reports(Path dir) throws IOException {
        if (Files.isRegularFile(dir.resolve("report.json"))) {
            return List.of(dir.resolve("report.json"));
        }
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> found = s.filter(d -> d.getFileName().toString().startsWith("load-"))
                    .map(d -> d.resolve("report.json")).filter(Files::isRegularFile).sorted().toList();
            if (found.isEmpty()) {
                throw new IOException("no load-*/report.json in " + dir);
            }
            return found;
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> parse(Path f) throws IOException {
        return (Map<String, Object>) JsonParser.parse(Files.readString(f, StandardCharsets.UTF_8));
    }

    /** The ranges, per load: each protocol's figures, the TCP/Homa short p99 ratio, the counts of valid and carried runs. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> aggregate(int runCount, Map<Double, Map<Integer, Map<String, Object>>> byLoad) {
        List<Object> loads = new ArrayList<>();
        for (Map.Entry<Double, Map<Integer, Map<String, Object>>> e : byLoad.entrySet()) {
            Map<String, Object> load = new LinkedHashMap<>();
            load.put("load", e.getKey());
            load.put("runs", e.getValue().size());
            Map<String, List<Map<String, Object>>> summaries = new LinkedHashMap<>();
            List<Double> ratios = new ArrayList<>();
            int valid = 0;
            for (Map<String, Object> report : e.getValue().values()) {
                if (!Boolean.FALSE.equals(report.get("valid"))) {
                    valid++;
                }
                Map<String, Object> protocols = (Map<String, Object>) report.get("protocols");
                protocols.forEach((p, v) -> summaries.computeIfAbsent(p, x -> new ArrayList<>())
                        .add((Map<String, Object>) ((Map<String, Object>) v).get("summary")));
                if (protocols.containsKey("homa") && protocols.containsKey("tcp")) {
                    ratios.add(shortP99(protocols, "tcp") / shortP99(protocols, "homa"));
                }
            }
            load.put("validRuns", valid);
            Map<String, Object> protocols = new LinkedHashMap<>();
            summaries.forEach((p, list) -> {
                Map<String, Object> figures = new LinkedHashMap<>();
                for (Figure f : FIGURES) {
                    figures.put(f.key, range(list.stream().map(s -> LoadReportCommand.num(s.get(f.key))).toList()));
                }
                figures.put("carriedRuns", list.stream().filter(RunRanges::carried).count());
                protocols.put(p, figures);
            });
            load.put("protocols", protocols);
            if (!ratios.isEmpty()) {
                load.put("tcpOverHomaShortP99", range(ratios));
            }
            loads.add(load);
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("runCount", runCount);
        json.put("loads", loads);
        return json;
    }

    private static boolean carried(Map<String, Object> summary) {
        if (summary.get("carriedOfferedLoad") instanceof Boolean b) {
            return b;
        }
        return LoadReportCommand.num(summary.get("completedOverOffered")) >= LoadReportCommand.SUSTAINED
                && LoadReportCommand.num(summary.get("completedBytesOverOffered")) >= LoadReportCommand.SUSTAINED;
    }

    @SuppressWarnings("unchecked")
    private static double shortP99(Map<String, Object> protocols, String p) {
        return LoadReportCommand.num(((Map<String, Object>) ((Map<String, Object>) protocols.get(p)).get("summary")).get("shortP99Slowdown"));
    }

    /** min, max and the values (NaN values, i.e. not measured, are left out of min and max). */
    static Map<String, Object> range(List<Double> values) {
        double min = Double.NaN;
        double max = Double.NaN;
        for (double v : values) {
            if (Double.isFinite(v)) {
                min = Double.isNaN(min) ? v : Math.min(min, v);
                max = Double.isNaN(max) ? v : Math.max(max, v);
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("min", min);
        m.put("max", max);
        m.put("values", new ArrayList<>(values));
        return m;
    }

    @SuppressWarnings("unchecked")
    private static String show(Object range, DoubleFunction<String> format) {
        Map<String, Object> r = (Map<String, Object>) range;
        double min = LoadReportCommand.num(r.get("min"));
        double max = LoadReportCommand.num(r.get("max"));
        if (!Double.isFinite(min)) {
            return "-";
        }
        String a = format.apply(min);
        String b = format.apply(max);
        return a.equals(b) ? a : a + " to " + b;
    }

    @SuppressWarnings("unchecked")
    static String markdown(List<Path> runs, Map<String, Object> json) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "Range (min to max) over %d runs: %s%n%n", runs.size(),
                String.join(", ", runs.stream().map(p -> "`" + p.getFileName() + "`").toList())));
        sb.append("| load | protocol | valid runs | carried the load |");
        FIGURES.forEach(f -> sb.append(' ').append(f.title).append(" |"));
        sb.append(" TCP/Homa short p99 |\n|---|---|---|---|");
        FIGURES.forEach(f -> sb.append("---|"));
        sb.append("---|\n");
        for (Object o : (List<Object>) json.get("loads")) {
            Map<String, Object> load = (Map<String, Object>) o;
            int n = ((Number) load.get("runs")).intValue();
            Map<String, Object> protocols = (Map<String, Object>) load.get("protocols");
            boolean first = true;
            for (Map.Entry<String, Object> e : protocols.entrySet()) {
                Map<String, Object> fig = (Map<String, Object>) e.getValue();
                sb.append(String.format(Locale.ROOT, "| %.0f%% | %s | %d of %d | %d of %d |", 100 * LoadReportCommand.num(load.get("load")),
                        e.getKey(), ((Number) load.get("validRuns")).intValue(), n, ((Number) fig.get("carriedRuns")).intValue(), n));
                for (Figure f : FIGURES) {
                    sb.append(' ').append(show(fig.get(f.key), f.format)).append(" |");
                }
                sb.append(' ').append(first && load.containsKey("tcpOverHomaShortP99")
                        ? show(load.get("tcpOverHomaShortP99"), LoadReportCommand::fmt) : "").append(" |\n");
                first = false;
            }
        }
        sb.append("\nA run is valid when at most ").append(String.format(Locale.ROOT, "%.0f%%", 100 * SendLateness.CPU_LATE_LIMIT))
                .append(" of each protocol's sends left more than 1 ms late for want of CPU; a protocol carried the load when it completed at least ")
                .append(String.format(Locale.ROOT, "%.0f%%", 100 * LoadReportCommand.SUSTAINED)).append(" of its offered calls and bytes."
                        + " Slowdowns use the shared base (the smaller unloaded RTT of the run) unless marked own-base.\n");
        return sb.toString();
    }
}
