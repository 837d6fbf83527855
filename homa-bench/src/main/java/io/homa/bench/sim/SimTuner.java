package io.homa.bench.sim;

import io.homa.bench.Json;
import io.homa.core.EngineConfig;
import io.homa.core.sim.Workload;
import io.homa.core.sim.DatacenterTopology;
import io.homa.core.sim.SimAblation;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * {@code simulate --tune}: tries engine settings on the simulated datacenter for one workload and
 * load, ranks them (first the settings that deliver within 1% of the most bytes any setting
 * delivered, which is robust to windows too short for the workload's largest messages; among
 * them the lowest short-message p99 slowdown; then the most bytes delivered) and prints the best as
 * {@code HomaConfig} builder calls. The grid: unscheduled bytes (one round trip of the topology,
 * two, the engine's default scaled to the link, Linux's 40,000), overcommitment (2, 4, 8) and the
 * unscheduled cutoffs (Linux's, or fitted to the workload as the paper does: each unscheduled
 * level carries an equal share of the unscheduled bytes). The engine has no grant-batching
 * setting (it grants on every arrival that changes the schedule), so there is nothing to try there.
 */
final class SimTuner {
    /** Share of the best setting's delivered bytes a setting must reach to count as sustaining the load. */
    static final double SUSTAINED = 0.99;

    private SimTuner() {
    }

    static void run(SimulateCommand cmd, DatacenterTopology topo, EngineConfig base) throws IOException {
        Workload w = Workload.named(cmd.workload());
        int rtt = rttBytes(topo, base);
        int[] unscheduled = Arrays.stream(new int[]{rtt, 2 * rtt, base.unscheduledBytes, 40_000}).distinct().sorted().toArray();
        int[] overcommit = {2, 4, 8};
        List<Map<String, Object>> results = new ArrayList<>();
        for (int u : unscheduled) {
            EngineConfig withU = base.toBuilder().unscheduledBytes(u).build();
            List<int[]> cutoffs = List.of(base.unscheduledCutoffs(), fittedCutoffs(w, withU));
            for (int o : overcommit) {
                for (int c = 0; c < cutoffs.size(); c++) {
                    EngineConfig cfg = withU.toBuilder().maxOvercommit(o).unscheduledCutoffs(cutoffs.get(c)).build();
                    cmd.stderr().printf(Locale.ROOT, "simulate: tune unscheduledBytes=%d maxOvercommit=%d cutoffs=%s%n",
                            u, o, c == 0 ? "default" : "fitted " + Arrays.toString(cutoffs.get(c)));
                    Map<String, Object> r = cmd.runLogged(cmd.spec(cmd.workload(), cmd.load(), topo, cfg, SimAblation.NONE));
                    Map<String, Object> setting = new LinkedHashMap<>();
                    setting.put("unscheduledBytes", u);
                    setting.put("maxOvercommit", o);
                    setting.put("unscheduledCutoffs", Arrays.stream(cutoffs.get(c)).boxed().toList());
                    setting.put("cutoffs", c == 0 ? "default" : "fitted");
                    r.put("setting", setting);
                    results.add(r);
                }
            }
        }
        double most = results.stream().mapToDouble(r -> (Double) r.get("completed_bytes_fraction")).max().orElse(0);
        results.sort(order(SUSTAINED * most));
        Map<String, Object> all = new LinkedHashMap<>();
        all.put("command", cmd.commandLine());
        all.put("rtt_bytes", rtt);
        all.put("grant_batching", "not a setting of the engine: it grants on every arrival that changes the schedule");
        all.put("ranked", results);
        cmd.write("tune.json", Json.write(all));
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-4s %12s %10s %-8s %10s %10s%n",
                "rank", "unscheduled", "overcommit", "cutoffs", "short p99", "completed"));
        for (int i = 0; i < results.size(); i++) {
            Map<String, Object> r = results.get(i);
            @SuppressWarnings("unchecked")
            Map<String, Object> s = (Map<String, Object>) r.get("setting");
            sb.append(String.format(Locale.ROOT, "%-4d %12s %10s %-8s %10.2f %10.4f%n", i + 1, s.get("unscheduledBytes"),
                    s.get("maxOvercommit"), s.get("cutoffs"), (Double) r.get("short_p99_slowdown"), (Double) r.get("completed_bytes_fraction")));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> best = (Map<String, Object>) results.get(0).get("setting");
        sb.append(String.format(Locale.ROOT, "%nBest for %s at %.0f%% load on %d hosts (grant batching: no such setting in the engine):%n",
                cmd.workload(), 100 * cmd.load(), topo.hosts));
        sb.append(homaConfig(topo, best));
        cmd.stdout().print(sb);
    }

    private static Comparator<Map<String, Object>> order(double sustained) {
        return Comparator
                .<Map<String, Object>>comparingInt(r -> ((Double) r.get("completed_bytes_fraction")) >= sustained ? 0 : 1)
                .thenComparingDouble(r -> nanLast((Double) r.get("short_p99_slowdown")))
                .thenComparingDouble(r -> -((Double) r.get("completed_bytes_fraction")));
    }

    private static double nanLast(double v) {
        return Double.isNaN(v) ? Double.MAX_VALUE : v;
    }

    /** A round trip of the topology in bytes at the host link rate: a full frame out, a grant back. */
    static int rttBytes(DatacenterTopology topo, EngineConfig cfg) {
        int far = topo.racks > 1 ? topo.hostsPerRack() : 1;
        long rtt = topo.idealNanos(0, far, cfg.segmentPayload(), cfg.segmentPayload()) + topo.idealNanos(far, 0, 0, cfg.segmentPayload());
        return (int) (rtt * topo.hostLinkBitsPerSecond / 8_000_000_000L);
    }

    /**
     * Cutoffs for the unscheduled levels (above {@code maxScheduledPriority}) such that each level
     * carries an equal share of the workload's unscheduled bytes, shortest messages highest.
     */
    static int[] fittedCutoffs(Workload w, EngineConfig cfg) {
        int n = 200_000;
        int[] lengths = new int[n];
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < n; i++) {
            lengths[i] = w.sample(r);
        }
        Arrays.sort(lengths);
        int limit = cfg.unscheduledLimit();
        double total = 0;
        for (int len : lengths) {
            total += Math.min(len, limit);
        }
        int levels = 7 - cfg.maxScheduledPriority;
        int[] cutoffs = new int[8];
        int level = 7;
        double acc = 0;
        for (int len : lengths) {
            acc += Math.min(len, limit);
            if (level > cfg.maxScheduledPriority + 1 && acc >= total * (8 - level) / levels) {
                cutoffs[level--] = len;
            }
        }
        while (level > cfg.maxScheduledPriority) {
            cutoffs[level--] = cfg.maxMessageLength;
        }
        // Strictly increasing towards lower levels, so that each level gets some lengths.
        for (int l = 6; l > cfg.maxScheduledPriority; l--) {
            cutoffs[l] = Math.max(cutoffs[l], cutoffs[l + 1] + 1);
        }
        return cutoffs;
    }

    static String homaConfig(DatacenterTopology topo, Map<String, Object> s) {
        @SuppressWarnings("unchecked")
        List<Integer> c = (List<Integer>) s.get("unscheduledCutoffs");
        StringBuilder cut = new StringBuilder();
        for (int i = 0; i < c.size(); i++) {
            cut.append(i == 0 ? "" : ", ").append(c.get(i));
        }
        return String.format(Locale.ROOT, """
                HomaConfig.builder()
                        .linkMbps(%d)
                        .unscheduledBytes(%s)
                        .maxOvercommit(%s)
                        .unscheduledCutoffs(%s)
                        .build();
                """, topo.hostLinkBitsPerSecond / 1_000_000, s.get("unscheduledBytes"), s.get("maxOvercommit"), cut);
    }
}
