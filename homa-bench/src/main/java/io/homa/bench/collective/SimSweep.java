package io.homa.bench.collective;

import io.homa.collective.CollectiveBuffer;
import io.homa.collective.CollectiveGroup;
import io.homa.collective.CollectiveOptions;
import io.homa.collective.DataType;
import io.homa.collective.ReduceOp;
import io.homa.collective.sim.SimCollectives;
import io.homa.core.sim.Datacenter;
import io.homa.core.sim.DatacenterTopology;

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

    static List<Object> run(String op, List<Integer> ranks, List<Long> sizes, PrintStream out) {
        DatacenterTopology topo = DatacenterTopology.paper();
        out.printf(Locale.ROOT, "%nsimulator (%s), %s, synthetic payloads%n", topo, op);
        out.printf(Locale.ROOT, "%6s %10s %12s %12s %9s %9s%n", "ranks", "size", "time ms", "bound ms", "x bound", "busbw");
        List<Object> results = new ArrayList<>();
        for (int n : ranks) {
            if (n > topo.hosts) {
                throw new IllegalArgumentException(n + " ranks do not fit " + topo.hosts + " hosts");
            }
            for (long size : sizes) {
                Datacenter dc = new Datacenter(topo, Datacenter.engineConfigFor(topo), 1);
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
                double ms = (finishedAt[0] - start) / 1e6;
                long bytes = elements * 4L;
                double boundMs = CollectiveCommand.busFactor(op, n) * bytes * 8 / (double) topo.hostLinkBitsPerSecond * 1e3;
                double busbw = bytes * CollectiveCommand.busFactor(op, n) / (ms * 1e6);
                out.printf(Locale.ROOT, "%6d %10s %12.2f %12.2f %9.3f %6.3fGB/s%n", n, CollectiveCommand.size(bytes), ms,
                        boundMs, ms / boundMs, busbw);
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
                results.add(m);
            }
        }
        return results;
    }
}
