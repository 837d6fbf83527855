package io.homa.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The sweep's chart: short-call latency (p99 solid, p50 dashed; log scale) against the offered
 * background load, one curve per transport. A point where the transport did not carry the offered
 * background is drawn hollow and labelled, so that a curve never looks better for carrying less.
 * Plain SVG 1.1.
 */
public final class SweepChart {
    private static final int LEFT = LatencyChart.LEFT;
    private static final int TOP = LatencyChart.TOP;
    private static final int PLOT_HEIGHT = LatencyChart.PLOT_HEIGHT;
    private static final int PLOT_WIDTH = 640;
    private static final int BOTTOM = 70;
    private static final int RIGHT = 30;

    private SweepChart() {
    }

    public static String svg(LoadSweep sweep, String subtitle) {
        double maxX = 0;
        double lo = Double.MAX_VALUE;
        double hi = 0;
        for (List<LoadSweep.Point> points : sweep.curves().values()) {
            for (LoadSweep.Point p : points) {
                maxX = Math.max(maxX, p.offeredGbit());
                Summary s = p.summary();
                for (double v : new double[] {s.p50us(), s.p99us()}) {
                    if (s.measured() && Double.isFinite(v) && v > 0) {
                        lo = Math.min(lo, v);
                        hi = Math.max(hi, v);
                    }
                }
            }
        }
        if (hi == 0) {
            lo = 1;
            hi = 1000;
        }
        maxX = maxX <= 0 ? 1 : maxX * 1.05;
        int decadeLo = (int) Math.floor(Math.log10(lo));
        int decadeHi = Math.max(decadeLo + 1, (int) Math.ceil(Math.log10(hi)));
        int width = LEFT + PLOT_WIDTH + RIGHT;
        int height = TOP + PLOT_HEIGHT + BOTTOM;
        int bottom = TOP + PLOT_HEIGHT;

        StringBuilder sb = LatencyChart.open(width, height,
                "100 B call latency against background load (p99 solid, p50 dashed)", subtitle);
        double lx = LEFT;
        for (String t : sweep.curves().keySet()) {
            sb.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"60\" width=\"14\" height=\"14\" fill=\"%s\"/>%n", lx,
                    LatencyChart.color(t)));
            LatencyChart.text(sb, lx + 19, 72, 13, "start", "normal", "#000", t);
            lx += 40 + 8 * t.length();
        }
        LatencyChart.text(sb, lx + 10, 72, 12, "start", "normal", "#000", "hollow: offered load not carried");

        for (int d = decadeLo; d <= decadeHi; d++) {
            for (int m : new int[] {1, 2, 5}) {
                double v = m * Math.pow(10, d);
                if (Math.log10(v) > decadeHi + 1e-9) {
                    continue;
                }
                double py = y(v, decadeLo, decadeHi);
                sb.append(String.format(Locale.ROOT,
                        "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\"/>%n",
                        LEFT, py, LEFT + PLOT_WIDTH, py, m == 1 ? "#bbbbbb" : "#e6e6e6"));
                LatencyChart.text(sb, LEFT - 6, py + 4, m == 1 ? 12 : 10, "end", "normal", m == 1 ? "#000" : "#666",
                        LatencyChart.duration(v));
            }
        }
        double step = maxX <= 2 ? 0.5 : maxX <= 5 ? 1 : 2;
        for (double v = 0; v <= maxX + 1e-9; v += step) {
            double px = x(v, maxX);
            sb.append(String.format(Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e6e6e6\" stroke-width=\"1\"/>%n", px, TOP, px, bottom));
            LatencyChart.text(sb, px, bottom + 18, 12, "middle", "normal", "#000", CompareReport.fmt(v));
        }
        LatencyChart.text(sb, LEFT + PLOT_WIDTH / 2.0, bottom + 40, 13, "middle", "normal", "#000",
                "offered background, Gbit/s of 1 MB calls each way (Poisson arrivals)");
        sb.append(String.format(Locale.ROOT,
                "<text x=\"18\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">latency</text>%n",
                TOP + PLOT_HEIGHT / 2, TOP + PLOT_HEIGHT / 2));

        for (Map.Entry<String, List<LoadSweep.Point>> c : sweep.curves().entrySet()) {
            String color = LatencyChart.color(c.getKey());
            polyline(sb, c.getValue(), maxX, decadeLo, decadeHi, color, true);
            polyline(sb, c.getValue(), maxX, decadeLo, decadeHi, color, false);
            for (LoadSweep.Point p : c.getValue()) {
                Summary s = p.summary();
                if (!s.measured()) {
                    continue;
                }
                double px = x(p.offeredGbit(), maxX);
                double py = y(s.p99us(), decadeLo, decadeHi);
                sb.append(String.format(Locale.ROOT,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"/>%n",
                        px, py, s.backgroundCarried() ? color : "#ffffff", color));
                if (!s.backgroundCarried()) {
                    LatencyChart.text(sb, px + 7, py - 6, 10, "start", "normal", color,
                            "carried " + CompareReport.fmt(s.backgroundGbit()));
                }
            }
        }
        sb.append(String.format(Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#000\" stroke-width=\"1\"/>%n",
                LEFT, TOP, PLOT_WIDTH, PLOT_HEIGHT));
        sb.append("</svg>\n");
        return sb.toString();
    }

    private static void polyline(StringBuilder sb, List<LoadSweep.Point> points, double maxX, int lo, int hi,
                                 String color, boolean p99) {
        StringBuilder d = new StringBuilder();
        for (LoadSweep.Point p : points) {
            Summary s = p.summary();
            double v = p99 ? s.p99us() : s.p50us();
            if (s.measured() && Double.isFinite(v) && v > 0) {
                d.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(p.offeredGbit(), maxX), y(v, lo, hi)));
            }
        }
        if (d.length() > 0) {
            sb.append(String.format(Locale.ROOT,
                    "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s/>%n", d.toString().trim(), color,
                    p99 ? "2.5" : "1.5", p99 ? "" : " stroke-dasharray=\"6 4\""));
        }
    }

    private static double x(double gbit, double maxX) {
        return LEFT + gbit / maxX * PLOT_WIDTH;
    }

    private static double y(double us, int lo, int hi) {
        double f = (Math.log10(Math.max(us, 1e-9)) - lo) / (hi - lo);
        return TOP + PLOT_HEIGHT - f * PLOT_HEIGHT;
    }
}
