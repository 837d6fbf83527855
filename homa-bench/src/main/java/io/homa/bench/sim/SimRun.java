package io.homa.bench.sim;

import io.homa.bench.load.SizeDistribution;
import io.homa.core.Counter;
import io.homa.core.EngineConfig;
import io.homa.core.sim.Workload;
import io.homa.core.sim.Datacenter;
import io.homa.core.sim.DatacenterHost;
import io.homa.core.sim.DatacenterTopology;
import io.homa.core.sim.DatacenterWorkload;
import io.homa.core.sim.SimAblation;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One simulated run: the topology with a real engine per host, the workload at a load, a warm-up,
 * the measurement window and a drain during which traffic goes on (so that the last measured
 * messages meet the same load) while the measured ones finish.
 */
record SimRun(String workload, double load, DatacenterTopology topology, EngineConfig engine, SimAblation ablation,
              long seed, long warmupNanos, long windowNanos, long drainNanos) {
    /** Samples of the backlog over a run. */
    static final int SAMPLES = 100;

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
        List<Object> backlog = new ArrayList<>();
        long step = Math.max(1, (end + drainNanos) / SAMPLES);
        runSampled(dc, rec, step, 0, warmupNanos - 1, backlog);
        long before = dc.dataPayloadDelivered();
        long mid = warmupNanos + windowNanos / 2;
        runSampled(dc, rec, step, warmupNanos - 1, mid - 1, backlog);
        long deliveredAtMid = dc.dataPayloadDelivered();
        long offeredAtMid = rec.offeredBytes();
        runSampled(dc, rec, step, mid - 1, end - 1, backlog);
        rec.deliveredPayload(dc.dataPayloadDelivered() - before);
        double secondHalf = (double) (dc.dataPayloadDelivered() - deliveredAtMid) / (rec.offeredBytes() - offeredAtMid);
        runSampled(dc, rec, step, end - 1, end + drainNanos, backlog);
        double wall = (System.nanoTime() - wallStart) / 1e9;

        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", workload);
        m.put("load", load);
        m.put("hosts", topo.hosts);
        m.put("racks", topo.racks);
        m.put("ablation", ablation.label);
        m.put("seed", seed);
        m.putAll(rec.toJson());
        m.put("completed_bytes_fraction_second_half", secondHalf);
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
        sim.put("backlog", backlog);
        sim.put("engine_counters", engineCounters(dc));
        m.put("simulation", sim);
        m.put("topology", topo.toString());
        m.put("engine", cfg.toString());
        return m;
    }

    /**
     * Runs from {@code from} to {@code to}, recording every {@code step} ns of virtual time the
     * backlog: payload bytes offered so far (every message, in or out of the window) minus DATA
     * payload bytes delivered so far. Stationary when the network carries the load; growing when
     * it does not.
     */
    private static void runSampled(Datacenter dc, SlowdownRecorder rec, long step, long from, long to, List<Object> out) {
        for (long t = (from / step + 1) * step; t <= to; t += step) {
            dc.runUntil(t);
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("ms", t / 1e6);
            s.put("offered_mb", rec.offeredAllBytes() / 1e6);
            s.put("delivered_mb", dc.dataPayloadDelivered() / 1e6);
            s.put("backlog_mb", (rec.offeredAllBytes() - dc.dataPayloadDelivered()) / 1e6);
            out.add(s);
        }
        dc.runUntil(to);
    }

    /** Every engine counter that is not zero, summed over the hosts. */
    private static Map<String, Object> engineCounters(Datacenter dc) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (Counter c : Counter.values()) {
            long sum = 0;
            for (DatacenterHost h : dc.hosts()) {
                sum += h.engine().counter(c);
            }
            if (sum != 0) {
                m.put(c.name().toLowerCase(Locale.ROOT), sum);
            }
        }
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
