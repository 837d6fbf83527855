package io.homa.bench.sim;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** The paper's p99 slowdowns (resource paper-slowdowns.csv, with its sources) to draw beside ours. */
final class PaperSlowdowns {
    record Point(String workload, String protocol, double cdf, double p99, String source) {
    }

    private PaperSlowdowns() {
    }

    static List<Point> load() {
        List<Point> points = new ArrayList<>();
        try (InputStream in = PaperSlowdowns.class.getResourceAsStream("paper-slowdowns.csv")) {
            if (in == null) {
                throw new IllegalStateException("paper-slowdowns.csv missing from the jar");
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            String line;
            while ((line = r.readLine()) != null) {
                line = line.trim();
                if (line.isEmpty() || line.startsWith("#") || line.startsWith("workload,")) {
                    continue;
                }
                String[] f = line.split(",", 5);
                points.add(new Point(f[0].trim(), f[1].trim(), Double.parseDouble(f[2].trim()),
                        Double.parseDouble(f[3].trim()), f.length > 4 ? f[4].trim() : ""));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return points;
    }

    /** The points of one workload and protocol, by cdf. */
    static List<Point> of(List<Point> all, String workload, String protocol) {
        return all.stream().filter(p -> p.workload.equals(workload) && p.protocol.equals(protocol))
                .sorted((a, b) -> Double.compare(a.cdf, b.cdf)).toList();
    }
}
