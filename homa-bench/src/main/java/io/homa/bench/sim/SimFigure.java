package io.homa.bench.sim;

import io.homa.bench.Json;
import io.homa.core.EngineConfig;
import io.homa.core.sim.DatacenterTopology;
import io.homa.core.sim.SimAblation;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@code simulate --figure}: W1-W5 at one load, our p99 per size beside the paper's. */
final class SimFigure {
    private SimFigure() {
    }

    static void run(SimulateCommand cmd, DatacenterTopology topo, EngineConfig engine) throws IOException {
        List<PaperSlowdowns.Point> paper = PaperSlowdowns.load();
        List<Map<String, Object>> runs = new ArrayList<>();
        List<SimCharts.Panel> panels = new ArrayList<>();
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT,
                "%-4s %10s %12s %14s  %s%n", "wl", "short p99", "completed", "paper's Homa", "ours / paper at the paper's points"));
        for (String w : List.of("w1", "w2", "w3", "w4", "w5")) {
            Map<String, Object> r = cmd.runLogged(cmd.spec(w, cmd.load(), topo, engine, SimAblation.NONE));
            runs.add(r);
            List<SimCharts.Series> series = new ArrayList<>();
            series.add(SimCharts.ours(r, "homa-java", SimCharts.COLORS[0]));
            StringBuilder ratios = new StringBuilder();
            for (String protocol : List.of("homa", "pfabric")) {
                List<PaperSlowdowns.Point> pts = PaperSlowdowns.of(paper, w, protocol);
                if (pts.isEmpty()) {
                    continue;
                }
                double[] x = pts.stream().mapToDouble(PaperSlowdowns.Point::cdf).toArray();
                double[] y = pts.stream().mapToDouble(PaperSlowdowns.Point::p99).toArray();
                series.add(new SimCharts.Series("paper: " + protocol, protocol.equals("homa") ? SimCharts.COLORS[1] : SimCharts.COLORS[5], true, x, y));
                if (protocol.equals("homa")) {
                    for (PaperSlowdowns.Point p : pts) {
                        ratios.append(String.format(Locale.ROOT, " cdf %.2f: %.2f", p.cdf(), nearest(r, p.cdf()) / p.p99()));
                    }
                }
            }
            panels.add(SimCharts.panel(w.toUpperCase(Locale.ROOT), r, series));
            table.append(String.format(Locale.ROOT, "%-4s %10.2f %12.4f %14s %s%n", w, (Double) r.get("short_p99_slowdown"),
                    (Double) r.get("completed_bytes_fraction"), PaperSlowdowns.of(paper, w, "homa").size() + " points", ratios));
        }
        Map<String, Object> all = new LinkedHashMap<>();
        all.put("command", cmd.commandLine());
        all.put("runs", runs);
        List<Object> p = new ArrayList<>();
        for (PaperSlowdowns.Point pt : paper) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("workload", pt.workload());
            m.put("protocol", pt.protocol());
            m.put("cdf", pt.cdf());
            m.put("p99_slowdown", pt.p99());
            m.put("source", pt.source());
            p.add(m);
        }
        all.put("paper", p);
        cmd.write("figure.json", Json.write(all));
        String title = String.format(Locale.ROOT, "p99 slowdown vs message size at %.0f%% load, %d hosts: homa-java (simulated) and the SIGCOMM 2018 paper",
                100 * cmd.load(), topo.hosts);
        cmd.write("figure.svg", SimCharts.svg(title, panels));
        cmd.stdout().print(table);
    }

    /** Our p99 slowdown in the bucket whose CDF position is nearest {@code cdf}. */
    private static double nearest(Map<String, Object> run, double cdf) {
        double best = Double.NaN;
        double dist = Double.MAX_VALUE;
        for (Map<String, Object> b : SimTables.bucketList(run)) {
            double d = Math.abs(((Number) b.get("cdf")).doubleValue() - cdf);
            if (d < dist) {
                dist = d;
                best = ((Number) b.get("p99_slowdown")).doubleValue();
            }
        }
        return best;
    }
}
