package io.homa.bench.collective;

import io.homa.collective.CollectiveBuffer;
import io.homa.collective.CollectiveGroup;
import io.homa.collective.CollectiveOptions;
import io.homa.collective.DataType;
import io.homa.collective.ReduceOp;
import io.homa.collective.sim.SimCollectives;
import io.homa.core.sim.Datacenter;
import io.homa.core.sim.DatacenterTopology;
import io.homa.core.sim.DatacenterWorkload;
import io.homa.core.sim.Workload;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The collectives in the simulated datacenter of {@code simulate} (the SIGCOMM 2018 topology: 144
 * hosts in 9 racks, 10 Gbit/s host links, 40 Gbit/s fabric), each rank on a host of its own (ranks
 * 0..n-1 on hosts 0..n-1, rack by rack), the real engine on every host, synthetic payloads
 * (lengths without data). Reports the operation's time in virtual time against the bound
 * busFactor x S / link rate (payload bytes at the link rate; headers make up the rest).
 */
final class SimSweep {
    private static final long SECOND = 1_000_000_000L;

    private SimSweep() {
    }

    private static double pct(List<Double> sorted, double p) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(sorted.size() * p) - 1));
    }

    static List<Object> run(String op, List<Integer> ranks, List<Long> sizes, double coordLoad, PrintStream out) {
        DatacenterTopology paper = DatacenterTopology.paper();
        out.printf(Locale.ROOT, "%nsimulator (%s), %s, synthetic payloads%s%n", paper, op, coordLoad > 0
                ? String.format(Locale.ROOT, "; coordination RPCs of 100 B-4 KB at %.0f%% of each rank's link, among the ranks' hosts only",
                coordLoad * 100) : "");
        out.printf(Locale.ROOT, "%6s %10s %12s %12s %9s %9s%s%n", "ranks", "size", "time ms", "bound ms", "x bound", "busbw",
                coordLoad > 0 ? "   coord n  slowdown p50  p99" : "");
        List<Object> results = new ArrayList<>();
        for (int n : ranks) {
            if (n > paper.hosts) {
                throw new IllegalArgumentException(n + " ranks do not fit " + paper.hosts + " hosts");
            }
            for (long size : sizes) {
                // With coordination RPCs, the datacenter is just the ranks' racks (16 hosts each), so
                // that every RPC is between two ranks' hosts and meets the all-reduce.
                DatacenterTopology topo = coordLoad > 0
                        ? paper.toBuilder().hosts(((n + 15) / 16) * 16).racks((n + 15) / 16).build() : paper;
                Datacenter dc = new Datacenter(topo, Datacenter.engineConfigFor(topo), 1);
                List<Double> slowdowns = new ArrayList<>();
                long[] endOfReduce = {Long.MAX_VALUE};
                if (coordLoad > 0) {
                    DatacenterWorkload w = new DatacenterWorkload(dc, Workload.uniform(100, 4_000), coordLoad, 7,
                            new DatacenterWorkload.Observer() {
                                @Override
                                public void offered(int length, long atNanos) {
                                }

                                @Override
                                public void delivered(int length, int src, int dst, long startNanos, long endNanos, long idealNanos) {
                                    if (startNanos < endOfReduce[0]) { // sent while the all-reduce ran
                                        slowdowns.add((double) (endNanos - startNanos) / idealNanos);
                                    }
                                }

                                @Override
                                public void failed(int length, long startNanos) {
                                    slowdowns.add(Double.POSITIVE_INFINITY);
                                }
                            });
                    w.start(Long.MAX_VALUE);
                }
                int[] hosts = new int[n];
                for (int i = 0; i < n; i++) {
                    hosts[i] = i;
                }
                List<CollectiveGroup> groups = SimCollectives.on(dc, hosts,
                        CollectiveOptions.defaults().withDeadline(java.time.Duration.ofSeconds(600)), true);
                int elements = (int) Math.min(Integer.MAX_VALUE, size / 4);
                long start = dc.now();
                List<CompletableFuture<Void>> fs = new ArrayList<>();
                for (CollectiveGroup g : groups) {
                    CollectiveBuffer b = CollectiveBuffer.synthetic(DataType.FLOAT, elements);
                    fs.add(switch (op) {
                        case "broadcast" -> g.broadcast(b, 0);
                        case "allgather" -> g.allGather(CollectiveBuffer.synthetic(DataType.FLOAT,
                                io.homa.collective.internal.Schedules.blockLength(elements, n, g.rank())), b);
                        case "reducescatter" -> g.reduceScatter(b, CollectiveBuffer.synthetic(DataType.FLOAT,
                                io.homa.collective.internal.Schedules.blockLength(elements, n, g.rank())), ReduceOp.SUM);
                        default -> g.allReduce(b, ReduceOp.SUM);
                    });
                }
                long[] finishedAt = {start};
                for (CompletableFuture<Void> f : fs) {
                    f.whenComplete((v, e) -> finishedAt[0] = Math.max(finishedAt[0], dc.now())); // virtual time
                }
                long limit = start + 600 * SECOND;
                while (!fs.stream().allMatch(CompletableFuture::isDone) && dc.now() < limit && !dc.idle()) {
                    dc.runUntil(dc.now() + 1_000_000);
                }
                for (CompletableFuture<Void> f : fs) {
                    f.join();
                }
                endOfReduce[0] = finishedAt[0];
                double ms = (finishedAt[0] - start) / 1e6;
                slowdowns.sort(null);
                long bytes = elements * 4L;
                double boundMs = CollectiveCommand.busFactor(op, n) * bytes * 8 / (double) topo.hostLinkBitsPerSecond * 1e3;
                double busbw = bytes * CollectiveCommand.busFactor(op, n) / (ms * 1e6);
                out.printf(Locale.ROOT, "%6d %10s %12.2f %12.2f %9.3f %6.3fGB/s%s%n", n, CollectiveCommand.size(bytes), ms,
                        boundMs, ms / boundMs, busbw, coordLoad > 0 ? String.format(Locale.ROOT, " %9d %13.2f %5.2f",
                                slowdowns.size(), pct(slowdowns, 0.5), pct(slowdowns, 0.99)) : "");
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("transport", "homa-sim");
                m.put("ranks", n);
                m.put("op", op);
                m.put("bytes", bytes);
                m.put("time_ms", ms);
                m.put("bound_ms", boundMs);
                m.put("time_over_bound", ms / boundMs);
                m.put("busbw_gbytes_per_s", busbw);
                m.put("link_gbit_per_s", topo.hostLinkBitsPerSecond / 1e9);
                m.put("packets_dropped", dc.packetsDropped());
                if (coordLoad > 0) {
                    m.put("coord_load", coordLoad);
                    m.put("coord_messages", slowdowns.size());
                    m.put("coord_slowdown_p50", pct(slowdowns, 0.5));
                    m.put("coord_slowdown_p99", pct(slowdowns, 0.99));
                    m.put("hosts", topo.hosts);
                }
                results.add(m);
            }
        }
        return results;
    }
}
