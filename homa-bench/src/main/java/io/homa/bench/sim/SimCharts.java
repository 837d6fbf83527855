package io.homa.bench.sim;

import io.homa.bench.load.SlowdownChart;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The paper's chart for the simulations: p99 slowdown (log y axis) against message size, the x
 * axis being the cumulative fraction of messages (each size bucket at its CDF position, labelled
 * with its largest size), one panel per workload.
 */
final class SimCharts {
    /** A curve; {@code dashed} for the paper's figures, drawn beside ours. */
    record Series(String name, String color, boolean dashed, double[] x, double[] y) {
    }

    /** One workload's panel. */
    record Panel(String title, List<Series> series, double[] tickX, String[] tickLabels) {
    }

    static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#7f7f7f"};

    private SimCharts() {
    }

    /** Our p99 per bucket of each run, in one panel (the ablation chart). */
    static String ablations(List<Map<String, Object>> runs) {
        List<Series> series = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            series.add(ours(runs.get(i), (String) runs.get(i).get("ablation"), COLORS[i % COLORS.length]));
        }
        Map<String, Object> first = runs.get(0);
        String title = String.format(Locale.ROOT, "%s at %.0f%% load, %s hosts: what each mechanism buys",
                ((String) first.get("workload")).toUpperCase(Locale.ROOT), 100 * (Double) first.get("load"), first.get("hosts"));
        return svg(title, List.of(panel("", first, series)));
    }

    static Series ours(Map<String, Object> run, String name, String color) {
        List<Map<String, Object>> b = SimTables.bucketList(run);
        double[] x = new double[b.size()];
        double[] y = new double[b.size()];
        for (int k = 0; k < b.size(); k++) {
            x[k] = ((Number) b.get(k).get("cdf")).doubleValue();
            y[k] = ((Number) b.get(k).get("p99_slowdown")).doubleValue();
        }
        return new Series(name, color, false, x, y);
    }

    static Panel panel(String title, Map<String, Object> run, List<Series> series) {
        List<Map<String, Object>> b = SimTables.bucketList(run);
        double[] tx = new double[b.size()];
        String[] tl = new String[b.size()];
        for (int k = 0; k < b.size(); k++) {
            tx[k] = ((Number) b.get(k).get("cdf")).doubleValue();
            tl[k] = SlowdownChart.size(((Number) b.get(k).get("max_bytes")).doubleValue());
        }
        return new Panel(title, series, tx, tl);
    }

    static String svg(String title, List<Panel> panels) {
        int pw = 330;
        int ph = 240;
        int left = 60;
        int top = 60;
        int gapX = 80;
        int gapY = 110;
        int cols = Math.min(panels.size(), 3);
        int rows = (panels.size() + cols - 1) / cols;
        int w = left + cols * (pw + gapX);
        int h = top + rows * (ph + gapY) + 20;
        double maxY = 10;
        for (Panel p : panels) {
            for (Series s : p.series) {
                for (double v : s.y) {
                    if (Double.isFinite(v)) {
                        maxY = Math.max(maxY, v);
                    }
                }
            }
        }
        int decades = Math.max(1, (int) Math.ceil(Math.log10(maxY) - 1e-9));
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">%n", w, h, w, h));
        sb.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", w, h));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">%s</text>%n", w / 2, esc(title)));
        for (int i = 0; i < panels.size(); i++) {
            Panel p = panels.get(i);
            int x0 = left + (i % cols) * (pw + gapX);
            int y0 = top + (i / cols) * (ph + gapY);
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\">%s</text>%n", x0 + pw / 2, y0 - 8, esc(p.title)));
            for (int d = 0; d <= decades; d++) {
                double y = y0 + ph - (double) d / decades * ph;
                sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>%n", x0, y, x0 + pw, y));
                sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", x0 - 5, y + 4, (long) Math.pow(10, d)));
            }
            for (int k = 0; k < p.tickX.length; k++) {
                double x = x0 + p.tickX[k] * pw;
                sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>%n", x, y0, x, y0 + ph));
                sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" transform=\"rotate(-45 %.1f %d)\">%s</text>%n",
                        x + 3, y0 + ph + 14, x + 3, y0 + ph + 14, esc(p.tickLabels[k])));
            }
            sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>%n", x0, y0, pw, ph));
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 %d %d)\">p99 slowdown</text>%n",
                    x0 - 38, y0 + ph / 2, x0 - 38, y0 + ph / 2));
            int li = 0;
            for (Series s : p.series) {
                StringBuilder pts = new StringBuilder();
                StringBuilder dots = new StringBuilder();
                for (int k = 0; k < s.x.length; k++) {
                    if (!Double.isFinite(s.y[k]) || s.y[k] <= 0) {
                        continue;
                    }
                    double x = x0 + s.x[k] * pw;
                    double y = y0 + ph - Math.log10(Math.max(1, s.y[k])) / decades * ph;
                    pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
                    dots.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>%n", x, y, s.color));
                }
                sb.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
                        pts.toString().trim(), s.color, s.dashed ? " stroke-dasharray=\"6,4\"" : ""));
                sb.append(dots);
                int ly = y0 + 14 + li * 15;
                sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
                        x0 + 8, ly, x0 + 28, ly, s.color, s.dashed ? " stroke-dasharray=\"6,4\"" : ""));
                sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>%n", x0 + 33, ly + 4, esc(s.name)));
                li++;
            }
        }
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">Message size in bytes (x position: cumulative fraction of messages)</text>%n",
                w / 2, h - 8));
        sb.append("</svg>\n");
        return sb.toString();
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
