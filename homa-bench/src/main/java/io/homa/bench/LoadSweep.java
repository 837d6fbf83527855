package io.homa.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code compare --sweep}: {@code loaded-100B} at several offered background loads for every
 * transport that carries 1 MB calls. One point is an anecdote; the curve of short-call latency
 * against background load is the result. Results go to sweep.json and sweep.svg ({@link SweepChart}).
 */
public final class LoadSweep {
    /** Offered background loads of the sweep by default, Gbit/s of 1 MB calls each way. */
    public static final List<Double> DEFAULT_LOADS = List.of(0.5, 1.0, 2.0, 4.0, 6.0);

    /** One point of a transport's curve: the summary of its repetitions at one offered load. */
    public record Point(double offeredGbit, Summary summary) {
    }

    private final Map<String, List<Point>> curves = new LinkedHashMap<>();
    private final Map<String, Object> machine;
    private final String command;

    public LoadSweep(Map<String, List<Point>> curves, Map<String, Object> machine, String command) {
        for (String t : Transports.KNOWN) {
            if (curves.containsKey(t)) {
                this.curves.put(t, List.copyOf(curves.get(t)));
            }
        }
        this.machine = machine;
        this.command = command;
    }

    /** The curves by transport (display order), points in the order of the offered loads. */
    public Map<String, List<Point>> curves() {
        return curves;
    }

    /** sweep.json: {@code {"sweep": {TRANSPORT: [{"offered_gbit_per_s", "background_gbit_per_s", ...}]}, ...}}. */
    public Map<String, Object> toJson() {
        Map<String, Object> root = new LinkedHashMap<>();
        Map<String, Object> sweep = new LinkedHashMap<>();
        for (Map.Entry<String, List<Point>> c : curves.entrySet()) {
            List<Object> points = new ArrayList<>();
            for (Point p : c.getValue()) {
                Summary s = p.summary();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("background_offered_gbit_per_s", p.offeredGbit());
                if (s.measured()) {
                    m.put("background_gbit_per_s", s.backgroundGbit());
                    m.put("background_carried", s.backgroundCarried());
                    m.put("p50_us", s.p50us());
                    m.put("p99_us", s.p99us());
                    m.put("p999_us", s.p999us());
                    m.put("cpu_us_per_call", s.cpuUsPerCall());
                    m.put("alloc_bytes_per_call", s.allocBytesPerCall());
                    m.put("cpu_cores", s.cpuCores());
                }
                m.put("repetitions", s.repetitions());
                m.put("repetitions_ok", s.succeeded());
                if (s.error() != null) {
                    m.put("error", s.error());
                }
                points.add(m);
            }
            sweep.put(c.getKey(), points);
        }
        root.put("scenario", Scenario.LOADED_100B.id());
        root.put("sweep", sweep);
        root.put("machine", machine);
        root.put("command", command);
        return root;
    }

    /** The printed table: one row per transport and load. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        String row = "%-11s %9s %11s %10s %10s %10s %9s %10s  %s%n";
        sb.append(String.format(Locale.ROOT, row, "transport", "offered", "background", "p50 us", "p99 us",
                "p99.9 us", "cpu us/c", "alloc B/c", "notes"));
        for (Map.Entry<String, List<Point>> c : curves.entrySet()) {
            for (Point p : c.getValue()) {
                Summary s = p.summary();
                String notes = !s.measured() ? "FAILED: " + s.error() : s.backgroundCarried() ? "" : "NOT CARRIED";
                sb.append(String.format(Locale.ROOT, row, c.getKey(), CompareReport.fmt(p.offeredGbit()),
                        CompareReport.fmt(s.backgroundGbit()), CompareReport.fmt(s.p50us()), CompareReport.fmt(s.p99us()),
                        CompareReport.fmt(s.p999us()), CompareReport.fmt(s.cpuUsPerCall()),
                        CompareReport.fmt(s.allocBytesPerCall()), notes));
            }
        }
        sb.append("offered and background (achieved) in Gbit/s of 1 MB calls each way; latency of the 100 B probe\n");
        return sb.toString();
    }
}
