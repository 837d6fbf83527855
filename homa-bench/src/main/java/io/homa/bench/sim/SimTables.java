package io.homa.bench.sim;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The text tables {@code simulate} prints. */
final class SimTables {
    private SimTables() {
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> bucketList(Map<String, Object> run) {
        return (List<Map<String, Object>>) run.get("buckets");
    }

    /** Per size bucket: largest size, count, p50 and p99 slowdown. */
    static String buckets(Map<String, Object> run) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%s at %.0f%% load, %s hosts (%s): short-message p99 slowdown %.2f, completed %.4f of offered bytes%n",
                run.get("workload"), 100 * (Double) run.get("load"), run.get("hosts"), run.get("ablation"),
                (Double) run.get("short_p99_slowdown"), (Double) run.get("completed_bytes_fraction")));
        sb.append(String.format(Locale.ROOT, "%-8s %12s %10s %10s %10s%n", "bucket", "max bytes", "count", "p50", "p99"));
        for (Map<String, Object> b : bucketList(run)) {
            sb.append(String.format(Locale.ROOT, "%-8s %12d %10d %10.2f %10.2f%n", b.get("bucket"), b.get("max_bytes"),
                    b.get("count"), (Double) b.get("p50_slowdown"), (Double) b.get("p99_slowdown")));
        }
        return sb.toString();
    }

    /** One row per run: what differs, the short-message tail, completed bytes and p99 per bucket. */
    static String compare(List<Map<String, Object>> runs) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-14s %-6s %6s %10s %10s  %s%n", "run", "wl", "load", "short p99", "completed", "p99 slowdown per bucket (1..10)"));
        for (Map<String, Object> r : runs) {
            StringBuilder p99 = new StringBuilder();
            for (Map<String, Object> b : bucketList(r)) {
                p99.append(String.format(Locale.ROOT, " %6.2f", (Double) b.get("p99_slowdown")));
            }
            sb.append(String.format(Locale.ROOT, "%-14s %-6s %6.2f %10.2f %10.4f %s%n", r.get("ablation"), r.get("workload"),
                    (Double) r.get("load"), (Double) r.get("short_p99_slowdown"), (Double) r.get("completed_bytes_fraction"), p99));
        }
        return sb.toString();
    }

    /**
     * Load against completed bytes (over the window and over its second half), the load carried
     * (offered load x completed fraction: the share of the links the delivered payload took, with
     * its headers) and the short-message tail.
     */
    static String sweep(List<Map<String, Object>> runs) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%6s %10s %12s %8s %10s %10s%n",
                "load", "completed", "second half", "carried", "short p50", "short p99"));
        for (Map<String, Object> r : runs) {
            double load = (Double) r.get("load");
            double completed = (Double) r.get("completed_bytes_fraction");
            sb.append(String.format(Locale.ROOT, "%6.2f %10.4f %12.4f %8.3f %10.2f %10.2f%n", load, completed,
                    (Double) r.get("completed_bytes_fraction_second_half"), load * completed,
                    (Double) r.get("short_p50_slowdown"), (Double) r.get("short_p99_slowdown")));
        }
        return sb.toString();
    }
}
