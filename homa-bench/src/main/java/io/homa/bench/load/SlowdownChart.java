package io.homa.bench.load;

import java.util.List;
import java.util.Locale;

/**
 * The papers' chart: p99 slowdown (log y axis) against message size, the x axis being the
 * cumulative fraction of messages (each bucket at its CDF position, labelled with its largest size).
 */
public final class SlowdownChart {
    /** One series: x = CDF positions (0..1), y = slowdowns; a dashed line for a second basis. */
    record Series(String name, String color, double[] x, double[] y, boolean dashed) {
    }

    /** A line of text under the legend (what each curve rests on); {@code warn} draws it in red. */
    record Note(String text, boolean warn) {
    }

    private SlowdownChart() {
    }

    static String svg(String title, List<Series> series, double[] tickX, String[] tickLabels) {
        return svg(title, series, tickX, tickLabels, List.of());
    }

    /** The chart, with {@code notes} printed below the plot (each protocol's completion and validity). */
    static String svg(String title, List<Series> series, double[] tickX, String[] tickLabels, List<Note> notes) {
        int w = 760;
        int h = 460 + 18 * notes.size();
        int left = 70;
        int right = 20;
        int top = 50;
        int bottom = 90 + 18 * notes.size();
        int pw = w - left - right;
        int ph = h - top - bottom;
        double maxY = 1;
        for (Series s : series) {
            for (double v : s.y) {
                if (Double.isFinite(v)) {
                    maxY = Math.max(maxY, v);
                }
            }
        }
        int decades = Math.max(1, (int) Math.ceil(Math.log10(maxY) + 1e-9));
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">%n", w, h, w, h));
        sb.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", w, h));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">%s</text>%n", w / 2, esc(title)));
        // y grid (log)
        for (int d = 0; d <= decades; d++) {
            double y = top + ph - (double) d / decades * ph;
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>%n", left, y, left + pw, y));
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", left - 6, y + 4, fmtPow(d)));
            if (d < decades) {
                for (int m = 2; m < 10; m++) {
                    double ym = top + ph - (d + Math.log10(m)) / decades * ph;
                    sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#f2f2f2\"/>%n", left, ym, left + pw, ym));
                }
            }
        }
        // x ticks: bucket sizes at their CDF positions, and the fraction axis
        for (int i = 0; i < tickX.length; i++) {
            double x = left + tickX[i] * pw;
            sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>%n", x, top, x, top + ph));
            sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" transform=\"rotate(-40 %.1f %d)\">%s</text>%n",
                    x + 4, top + ph + 16, x + 4, top + ph + 16, esc(tickLabels[i])));
        }
        sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>%n", left, top, pw, ph));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">Message size in bytes (x position: cumulative fraction of messages, 0 to 1)</text>%n",
                left + pw / 2, top + ph + 78));
        for (int i = 0; i < notes.size(); i++) {
            Note n = notes.get(i);
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\"%s>%s</text>%n", left, top + ph + 100 + 18 * i,
                    n.warn ? "#c00000" : "#333", n.warn ? " font-weight=\"bold\"" : "", esc(n.text)));
        }
        sb.append(String.format(Locale.ROOT, "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">p99 slowdown (log)</text>%n",
                top + ph / 2, top + ph / 2));
        // series
        int li = 0;
        for (Series s : series) {
            StringBuilder pts = new StringBuilder();
            StringBuilder dots = new StringBuilder();
            for (int i = 0; i < s.x.length; i++) {
                if (!Double.isFinite(s.y[i]) || s.y[i] <= 0) {
                    continue;
                }
                double x = left + s.x[i] * pw;
                double y = top + ph - Math.log10(Math.max(1, s.y[i])) / decades * ph;
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
                dots.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>%n", x, y, s.color));
            }
            String dash = s.dashed ? " stroke-dasharray=\"6 4\"" : "";
            sb.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>%n", pts.toString().trim(), s.color, dash));
            sb.append(dots);
            int ly = top + 16 + li * 18;
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>%n", left + 12, ly, left + 36, ly, s.color, dash));
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>%n", left + 42, ly + 4, esc(s.name)));
            li++;
        }
        sb.append("</svg>\n");
        return sb.toString();
    }

    private static String fmtPow(int d) {
        return d <= 4 ? String.valueOf((long) Math.pow(10, d)) : "1e" + d;
    }

    /** A byte count as a chart label: 315, 6.39K, 10M. */
    public static String size(double bytes) {
        if (bytes >= 1_000_000) {
            return trim(bytes / 1e6) + "M";
        }
        if (bytes >= 1000) {
            return trim(bytes / 1e3) + "K";
        }
        return String.valueOf((long) bytes);
    }

    private static String trim(double v) {
        String s = String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
        if (s.contains(".")) {
            s = s.replaceAll("0+$", "").replaceAll("\\.$", "");
        }
        return s;
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
