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
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * {@code simulate --tune}: tries engine settings on the simulated datacenter for one workload and
 * load, ranks them (first the settings that deliver within 1% of the most bytes any setting
 * delivered, which is robust to windows too short for the workload's largest messages; among
 * them the lowest short-message p99 slowdown; then the most bytes delivered) and prints the best as
 * {@code HomaConfig} builder calls.
 *
 * <p>The settings: unscheduled bytes (one round trip of the topology, two, the engine's default
 * scaled to the link, Linux's 40,000), overcommitment (2, 4, 8), grant batching (1, 4, 8, 16
 * segments) and the priority levels (Linux's cutoffs; cutoffs fitted to the workload as the paper
 * does, each unscheduled level carrying an equal share of the unscheduled bytes, with Linux's four
 * unscheduled levels or with two, leaving six to scheduled data). The whole grid would be 96 runs;
 * the tuner searches it one setting at a time instead (coordinate descent): from the defaults, it
 * tries every value of one setting with the others at the best found so far, keeps the best, and
 * goes on to the next setting, {@link #PASSES} times over; a setting already run is not run again.
 */
final class SimTuner {
    /** Share of the best setting's delivered bytes a setting must reach to count as sustaining the load. */
    static final double SUSTAINED = 0.99;
    /** Times the search goes over every setting. */
    static final int PASSES = 1;
    static final List<String> CUTOFFS = List.of("linux", "fitted", "fitted-2");

    /** One point of the search space. */
    record Setting(int unscheduledBytes, int maxOvercommit, int grantBatchSegments, String cutoffs) {
        /** The engine configuration of this setting on top of {@code base}. */
        EngineConfig engine(EngineConfig base, Workload w) {
            EngineConfig.Builder b = base.toBuilder().unscheduledBytes(unscheduledBytes).maxOvercommit(maxOvercommit)
                    .grantBatchSegments(grantBatchSegments);
            switch (cutoffs) {
                case "linux" -> b.maxScheduledPriority(base.maxScheduledPriority).unscheduledCutoffs(base.unscheduledCutoffs());
                case "fitted" -> b.maxScheduledPriority(3);
                case "fitted-2" -> b.maxScheduledPriority(5);
                default -> throw new IllegalArgumentException("cutoffs " + cutoffs);
            }
            EngineConfig cfg = b.build();
            return cutoffs.equals("linux") ? cfg : cfg.toBuilder().unscheduledCutoffs(fittedCutoffs(w, cfg)).build();
        }

        Setting withUnscheduled(int v) {
            return new Setting(v, maxOvercommit, grantBatchSegments, cutoffs);
        }

        Setting withOvercommit(int v) {
            return new Setting(unscheduledBytes, v, grantBatchSegments, cutoffs);
        }

        Setting withBatch(int v) {
            return new Setting(unscheduledBytes, maxOvercommit, v, cutoffs);
        }

        Setting withCutoffs(String v) {
            return new Setting(unscheduledBytes, maxOvercommit, grantBatchSegments, v);
        }
    }

    private SimTuner() {
    }

    static void run(SimulateCommand cmd, DatacenterTopology topo, EngineConfig base) throws IOException {
        Workload w = Workload.named(cmd.workload());
        int rtt = rttBytes(topo, base);
        int[] unscheduled = Arrays.stream(new int[]{rtt, 2 * rtt, base.unscheduledBytes, 40_000}).distinct().sorted().toArray();
        int[] overcommit = {2, 4, 8};
        int[] batch = IntStream.concat(IntStream.of(1, 4, 8, 16), IntStream.of(base.grantBatchSegments)).distinct().sorted().toArray();
        Setting defaults = new Setting(base.unscheduledBytes, base.maxOvercommit, base.grantBatchSegments, "linux");
        List<Map<String, Object>> results = search(defaults, unscheduled, overcommit, batch, s -> tryOne(cmd, topo, base, w, s));
        results.forEach(r -> r.remove("setting_record"));
        Map<String, Object> all = new LinkedHashMap<>();
        all.put("command", cmd.commandLine());
        all.put("rtt_bytes", rtt);
        all.put("search", "coordinate descent from the defaults over unscheduledBytes " + Arrays.toString(unscheduled)
                + ", maxOvercommit " + Arrays.toString(overcommit) + ", grantBatchSegments " + Arrays.toString(batch)
                + ", cutoffs " + CUTOFFS + "; " + PASSES + " pass(es)");
        all.put("ranked", results);
        cmd.write("tune.json", Json.write(all));
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-4s %12s %10s %6s %-9s %10s %10s%n",
                "rank", "unscheduled", "overcommit", "batch", "cutoffs", "short p99", "completed"));
        for (int i = 0; i < results.size(); i++) {
            Map<String, Object> r = results.get(i);
            @SuppressWarnings("unchecked")
            Map<String, Object> s = (Map<String, Object>) r.get("setting");
            sb.append(String.format(Locale.ROOT, "%-4d %12s %10s %6s %-9s %10.2f %10.4f%n", i + 1, s.get("unscheduledBytes"),
                    s.get("maxOvercommit"), s.get("grantBatchSegments"), s.get("cutoffs"),
                    (Double) r.get("short_p99_slowdown"), (Double) r.get("completed_bytes_fraction")));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> top = (Map<String, Object>) results.get(0).get("setting");
        sb.append(String.format(Locale.ROOT, "%nBest for %s at %.0f%% load on %d hosts:%n",
                cmd.workload(), 100 * cmd.load(), topo.hosts));
        sb.append(homaConfig(topo, top));
        cmd.stdout().print(sb);
    }

    /**
     * The coordinate descent: from {@code start}, every value of one setting with the others at the
     * best found so far, then the next setting; {@code run} runs a setting once. Returns every run,
     * ranked, each with its {@link Setting} under "setting_record".
     */
    static List<Map<String, Object>> search(Setting start, int[] unscheduled, int[] overcommit, int[] batch,
                                            Function<Setting, Map<String, Object>> run) {
        List<Function<Setting, List<Setting>>> dimensions = List.of(
                b -> Arrays.stream(unscheduled).mapToObj(b::withUnscheduled).toList(),
                b -> Arrays.stream(overcommit).mapToObj(b::withOvercommit).toList(),
                b -> Arrays.stream(batch).mapToObj(b::withBatch).toList(),
                b -> CUTOFFS.stream().map(b::withCutoffs).toList());
        Map<Setting, Map<String, Object>> done = new LinkedHashMap<>();
        Setting best = start;
        for (int pass = 0; pass < PASSES; pass++) {
            for (Function<Setting, List<Setting>> dimension : dimensions) {
                for (Setting s : dimension.apply(best)) { // candidates around the best so far
                    if (!done.containsKey(s)) {
                        Map<String, Object> r = run.apply(s);
                        r.put("setting_record", s);
                        done.put(s, r);
                    }
                }
                best = (Setting) ranked(done.values()).get(0).get("setting_record");
            }
        }
        return ranked(done.values());
    }

    private static Map<String, Object> tryOne(SimulateCommand cmd, DatacenterTopology topo, EngineConfig base, Workload w,
                                              Setting s) {
        EngineConfig cfg = s.engine(base, w);
        cmd.stderr().printf(Locale.ROOT, "simulate: tune %s%n", s);
        Map<String, Object> r = cmd.runLogged(cmd.spec(cmd.workload(), cmd.load(), topo, cfg, SimAblation.NONE));
        Map<String, Object> setting = new LinkedHashMap<>();
        setting.put("unscheduledBytes", s.unscheduledBytes());
        setting.put("maxOvercommit", s.maxOvercommit());
        setting.put("grantBatchSegments", s.grantBatchSegments());
        setting.put("cutoffs", s.cutoffs());
        setting.put("maxScheduledPriority", cfg.maxScheduledPriority);
        setting.put("unscheduledCutoffs", Arrays.stream(cfg.unscheduledCutoffs()).boxed().toList());
        r.put("setting", setting);
        return r;
    }

    /** The runs, best first (see the class comment). */
    private static List<Map<String, Object>> ranked(java.util.Collection<Map<String, Object>> runs) {
        double most = runs.stream().mapToDouble(r -> (Double) r.get("completed_bytes_fraction")).max().orElse(0);
        List<Map<String, Object>> list = new ArrayList<>(runs);
        list.sort(order(SUSTAINED * most));
        return list;
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
                        .grantBatchSegments(%s)
                        .maxScheduledPriority(%s)
                        .unscheduledCutoffs(%s)
                        .build();
                """, topo.hostLinkBitsPerSecond / 1_000_000, s.get("unscheduledBytes"), s.get("maxOvercommit"),
                s.get("grantBatchSegments"), s.get("maxScheduledPriority"), cut);
    }
}
