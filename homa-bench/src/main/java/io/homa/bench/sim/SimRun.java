package io.homa.bench.sim;

import io.homa.bench.load.SizeDistribution;
import io.homa.core.EngineConfig;
import io.homa.core.sim.Workload;
import io.homa.core.sim.Datacenter;
import io.homa.core.sim.DatacenterTopology;
import io.homa.core.sim.DatacenterWorkload;
import io.homa.core.sim.SimAblation;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One simulated run: the topology with a real engine per host, the workload at a load, a warm-up,
 * the measurement window and a drain during which traffic goes on (so that the last measured
 * messages meet the same load) while the measured ones finish.
 */
record SimRun(String workload, double load, DatacenterTopology topology, EngineConfig engine, SimAblation ablation,
              long seed, long warmupNanos, long windowNanos, long drainNanos) {

    /** Runs it; returns every figure of the run as JSON fields. */
    Map<String, Object> execute() {
        DatacenterTopology topo = ablation.topology(topology);
        EngineConfig cfg = ablation.engine(engine);
        Datacenter dc = new Datacenter(topo, cfg, seed);
        SizeDistribution sizes = SizeDistribution.parse(workload, 0);
        long end = warmupNanos + windowNanos;
        SlowdownRecorder rec = new SlowdownRecorder(sizes, warmupNanos, end);
        DatacenterWorkload traffic = new DatacenterWorkload(dc, Workload.named(workload), load, seed, rec);
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            pool.resetPeakUsage();
        }
        long wallStart = System.nanoTime();
        traffic.start(end + drainNanos);
        dc.runUntil(warmupNanos - 1);
        long before = dc.dataPayloadDelivered();
        dc.runUntil(end - 1);
        rec.deliveredPayload(dc.dataPayloadDelivered() - before);
        dc.runUntil(end + drainNanos);
        double wall = (System.nanoTime() - wallStart) / 1e9;

        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", workload);
        m.put("load", load);
        m.put("hosts", topo.hosts);
        m.put("racks", topo.racks);
        m.put("ablation", ablation.label);
        m.put("seed", seed);
        m.putAll(rec.toJson());
        Map<String, Object> sim = new LinkedHashMap<>();
        sim.put("warmup_ms", warmupNanos / 1e6);
        sim.put("window_ms", windowNanos / 1e6);
        sim.put("drain_ms", drainNanos / 1e6);
        sim.put("rpcs_started", traffic.started());
        sim.put("events", dc.eventsRun());
        sim.put("wall_seconds", wall);
        sim.put("events_per_second", dc.eventsRun() / Math.max(wall, 1e-9));
        sim.put("peak_heap_mb", peakHeapBytes() / 1e6);
        sim.put("max_heap_mb", Runtime.getRuntime().maxMemory() / 1e6);
        sim.put("packets_delivered", dc.packetsDelivered());
        sim.put("packets_dropped", dc.packetsDropped());
        long[] q = dc.maxQueuedBytes();
        Map<String, Object> queues = new LinkedHashMap<>();
        queues.put("host_nic", q[0]);
        queues.put("tor_to_host", q[1]);
        queues.put("tor_up", q[2]);
        queues.put("aggregation_down", q[3]);
        sim.put("max_queued_bytes", queues);
        m.put("simulation", sim);
        m.put("topology", topo.toString());
        m.put("engine", cfg.toString());
        return m;
    }

    /** Sum of the heap pools' peaks since the run started (an upper bound of the live heap). */
    private static long peakHeapBytes() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && pool.getPeakUsage() != null) {
                sum += pool.getPeakUsage().getUsed();
            }
        }
        return sum;
    }

    /** One line for progress output. */
    static String summary(Map<String, Object> r) {
        @SuppressWarnings("unchecked")
        Map<String, Object> sim = (Map<String, Object>) r.get("simulation");
        return String.format(Locale.ROOT, "%s load %.2f %s: short p99 slowdown %.2f, completed %.4f of offered bytes, %d messages; "
                        + "%.1f s wall, %.2f M events/s, peak heap %.0f of %.0f MB",
                r.get("workload"), (Double) r.get("load"), r.get("ablation"), (Double) r.get("short_p99_slowdown"),
                (Double) r.get("completed_bytes_fraction"), (Long) r.get("completed_messages"),
                (Double) sim.get("wall_seconds"), (Double) sim.get("events_per_second") / 1e6,
                (Double) sim.get("peak_heap_mb"), (Double) sim.get("max_heap_mb"));
    }
}
