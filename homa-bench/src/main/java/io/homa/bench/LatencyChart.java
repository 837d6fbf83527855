package io.homa.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The compare command's chart: for each latency scenario a group of columns, one per transport,
 * each showing p50 (circle), p99 (square) and p99.9 (diamond) joined by a line, on a logarithmic
 * microsecond axis. Plain SVG 1.1 with no scripts or external resources.
 */
public final class LatencyChart {
    private static final Map<String, String> COLORS = Map.of(
            Transports.HOMA, "#d62728",
            Transports.HOMA_EPOLL, "#e377c2",
            Transports.HOMA_IOURING, "#bcbd22",
            Transports.HOMA_NIO, "#17becf",
            Transports.TCP_SINGLE, "#1f77b4",
            Transports.TCP_POOL, "#2ca02c",
            Transports.UDP_RAW, "#7f7f7f",
            Transports.GRPC, "#ff7f0e",
            Transports.GRPC_POOL, "#8c564b");

    /** Left margin (y labels), top margin (title and legend) and plot height, shared with {@link SweepChart}. */
    static final int LEFT = 78;
    static final int TOP = 96;
    static final int PLOT_HEIGHT = 420;
    private static final int RIGHT = 24;
    private static final int BOTTOM = 64;
    private static final int COLUMN = 68;
    private static final int GROUP_PAD = 28;

    private LatencyChart() {
    }

    /** The chart of {@code report}'s latency scenarios as an SVG document. */
    public static String svg(CompareReport report, String subtitle) {
        List<Scenario> scenarios = new ArrayList<>();
        for (Scenario s : report.scenarios()) {
            if (s.isLatency()) {
                scenarios.add(s);
            }
        }
        List<String> transports = new ArrayList<>(report.results().keySet());
        double lo = Double.MAX_VALUE;
        double hi = 0;
        for (String t : transports) {
            for (Scenario s : scenarios) {
                Summary m = report.get(t, s);
                if (m != null) {
                    for (double v : new double[] {m.p50us(), m.p99us(), m.p999us()}) {
                        if (Double.isFinite(v) && v > 0) {
                            lo = Math.min(lo, v);
                            hi = Math.max(hi, v);
                        }
                    }
                }
            }
        }
        if (hi == 0) {
            lo = 1;
            hi = 1000;
        }
        int decadeLo = (int) Math.floor(Math.log10(lo));
        int decadeHi = (int) Math.ceil(Math.log10(hi));
        if (decadeHi == decadeLo) {
            decadeHi++;
        }
        int groupWidth = Math.max(1, transports.size()) * COLUMN + GROUP_PAD;
        int plotWidth = Math.max(1, scenarios.size()) * groupWidth;
        int width = Math.max(LEFT + plotWidth + RIGHT, 640);
        int height = TOP + PLOT_HEIGHT + BOTTOM;
        Scale y = new Scale(decadeLo, decadeHi);

        StringBuilder sb = open(width, height, "Echo latency on one host: p50, p99, p99.9 per transport (log scale)", subtitle);

        // Legend: transports, then marker shapes.
        double lx = LEFT;
        for (String t : transports) {
            sb.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"60\" width=\"14\" height=\"14\" fill=\"%s\"/>%n", lx, color(t)));
            text(sb, lx + 19, 72, 13, "start", "normal", "#000", t);
            lx += 40 + 8 * t.length();
        }
        lx += 16;
        marker(sb, "p50", lx + 6, 67, "#000");
        text(sb, lx + 15, 72, 13, "start", "normal", "#000", "p50");
        marker(sb, "p99", lx + 56, 67, "#000");
        text(sb, lx + 65, 72, 13, "start", "normal", "#000", "p99");
        marker(sb, "p999", lx + 106, 67, "#000");
        text(sb, lx + 115, 72, 13, "start", "normal", "#000", "p99.9");

        // Grid and y labels: 1, 2, 5 x 10^k microseconds.
        int plotTop = TOP;
        int plotBottom = TOP + PLOT_HEIGHT;
        for (int d = decadeLo; d <= decadeHi; d++) {
            for (int m : new int[] {1, 2, 5}) {
                double v = m * Math.pow(10, d);
                if (Math.log10(v) > decadeHi + 1e-9) {
                    continue;
                }
                double py = plotBottom - y.fraction(v) * PLOT_HEIGHT;
                boolean major = m == 1;
                sb.append(String.format(Locale.ROOT,
                        "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\"/>%n",
                        LEFT, py, LEFT + plotWidth, py, major ? "#bbbbbb" : "#e6e6e6"));
                text(sb, LEFT - 6, py + 4, major ? 12 : 10, "end", "normal", major ? "#000" : "#666", duration(v));
            }
        }
        sb.append(String.format(Locale.ROOT,
                "<text x=\"18\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">latency</text>%n",
                plotTop + PLOT_HEIGHT / 2, plotTop + PLOT_HEIGHT / 2));

        // Groups.
        for (int g = 0; g < scenarios.size(); g++) {
            Scenario s = scenarios.get(g);
            double gx = LEFT + g * groupWidth;
            if (g % 2 == 1) {
                sb.append(String.format(Locale.ROOT,
                        "<rect x=\"%.1f\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f4f4f4\"/>%n", gx, plotTop, groupWidth, PLOT_HEIGHT));
            }
            text(sb, gx + groupWidth / 2.0, plotBottom + 22, 14, "middle", "bold", "#000", s.id());
            for (int i = 0; i < transports.size(); i++) {
                String t = transports.get(i);
                double cx = gx + GROUP_PAD / 2.0 + i * COLUMN + COLUMN / 2.0 - 12;
                Summary m = report.get(t, s);
                if (m == null) {
                    text(sb, cx, plotBottom - 8, 10, "middle", "normal", "#999", "n/a");
                    continue;
                }
                double y50 = plotBottom - y.fraction(m.p50us()) * PLOT_HEIGHT;
                double y99 = plotBottom - y.fraction(m.p99us()) * PLOT_HEIGHT;
                double y999 = plotBottom - y.fraction(m.p999us()) * PLOT_HEIGHT;
                String c = color(t);
                sb.append(String.format(Locale.ROOT,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>%n",
                        cx, y50, cx, y999, c));
                marker(sb, "p50", cx, y50, c);
                marker(sb, "p99", cx, y99, c);
                marker(sb, "p999", cx, y999, c);
                text(sb, cx + 9, y50 + 4, 10, "start", "normal", "#000", duration(m.p50us()));
                if (Math.abs(y99 - y50) >= 11) {
                    text(sb, cx + 9, y99 + 4, 10, "start", "normal", "#333", duration(m.p99us()));
                }
                if (Math.abs(y999 - y99) >= 11) {
                    text(sb, cx + 9, y999 + 4, 10, "start", "normal", "#555", duration(m.p999us()));
                }
            }
        }
        sb.append(String.format(Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#000\" stroke-width=\"1\"/>%n",
                LEFT, plotTop, plotWidth, PLOT_HEIGHT));
        text(sb, LEFT, height - 14, 11, "start", "normal", "#444",
                "Closed loop, one call at a time; loaded: 1 MB calls arriving open-loop (Poisson) to the same server. Median of repetitions.");
        sb.append("</svg>\n");
        return sb.toString();
    }

    /** A new SVG document of that size on a white ground, with its title and subtitle. */
    static StringBuilder open(int width, int height, String title, String subtitle) {
        StringBuilder sb = new StringBuilder();
        sb.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        sb.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                        + "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">%n", width, height, width, height));
        sb.append(String.format(Locale.ROOT, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>%n", width, height));
        text(sb, LEFT, 26, 17, "start", "bold", "#000", title);
        text(sb, LEFT, 46, 12, "start", "normal", "#444", subtitle);
        return sb;
    }

    /** Log scale from 10^lo to 10^hi microseconds. */
    private record Scale(int lo, int hi) {
        double fraction(double v) {
            return (Math.log10(Math.max(v, 1e-9)) - lo) / (hi - lo);
        }
    }

    static String color(String transport) {
        return COLORS.getOrDefault(transport, "#9467bd");
    }

    private static void marker(StringBuilder sb, String kind, double x, double y, String color) {
        switch (kind) {
            case "p50" -> sb.append(String.format(Locale.ROOT,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>%n", x, y, color));
            case "p99" -> sb.append(String.format(Locale.ROOT,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" fill=\"#ffffff\" stroke=\"%s\" stroke-width=\"2\"/>%n",
                    x - 4.5, y - 4.5, color));
            default -> sb.append(String.format(Locale.ROOT,
                    "<path d=\"M %.1f %.1f l 6 6 l -6 6 l -6 -6 z\" fill=\"%s\"/>%n", x, y - 6, color));
        }
    }

    static void text(StringBuilder sb, double x, double y, int size, String anchor, String weight,
                             String fill, String content) {
        sb.append(String.format(Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\" font-weight=\"%s\" fill=\"%s\">%s</text>%n",
                x, y, size, anchor, weight, fill, escape(content)));
    }

    /** A latency in microseconds as "850 µs", "1.2 ms", "3 s". */
    static String duration(double us) {
        if (!Double.isFinite(us)) {
            return "-";
        }
        if (us >= 1_000_000) {
            return trim(us / 1_000_000) + " s";
        }
        if (us >= 1000) {
            return trim(us / 1000) + " ms";
        }
        return trim(us) + " \u00b5s";
    }

    private static String trim(double v) {
        if (v >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (v >= 10) {
            String s = String.format(Locale.ROOT, "%.1f", v);
            return s.endsWith(".0") ? s.substring(0, s.length() - 2) : s;
        }
        String s = String.format(Locale.ROOT, "%.2f", v);
        s = s.replaceAll("0+$", "");
        return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
    }

    static String escape(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '&' -> sb.append("&amp;");
                case '"' -> sb.append("&quot;");
                case '\'' -> sb.append("&apos;");
                default -> {
                    if (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.toString();
    }
}
