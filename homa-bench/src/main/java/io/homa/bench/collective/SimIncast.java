package io.homa.bench.collective;

import io.homa.core.EngineEvent;
import io.homa.core.sim.Datacenter;
import io.homa.core.sim.DatacenterHost;
import io.homa.core.sim.DatacenterTopology;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A parameter server's exchange in the simulated datacenter: every step, W workers push S bytes of
 * gradients to one server at once (incast on its downlink) and each pulls S bytes of parameters
 * back when its push has arrived (one Homa RPC per worker: request S, response S); the next step
 * starts when every worker has its parameters (synchronous training). The bound of a step is the
 * server's link: (W x S + S) / link rate (all pushes through its downlink, the last pull after
 * them), in payload bytes; at MTU 1,500 headers add 7.4%.
 */
final class SimIncast {
    private SimIncast() {
    }

    /** @param portBufferBytes each switch port's buffer (0: unlimited, as in the paper) */
    static List<Object> run(List<Integer> workers, List<Long> sizes, int steps, long portBufferBytes, PrintStream out) {
        DatacenterTopology topo = portBufferBytes > 0
                ? DatacenterTopology.paper().toBuilder().portBufferBytes(portBufferBytes).build() : DatacenterTopology.paper();
        out.printf(Locale.ROOT, "%nsimulator (%s): parameter server on host 0, workers on hosts 1..W, %d steps%n", topo, steps);
        out.printf(Locale.ROOT, "%8s %10s %12s %12s %12s %9s %9s %9s%n", "workers", "size", "step p50 ms", "step p99 ms",
                "bound ms", "p50/bound", "p99/bound", "dropped");
        List<Object> results = new ArrayList<>();
        for (int w : workers) {
            if (w + 1 > topo.hosts) {
                throw new IllegalArgumentException(w + " workers and a server do not fit " + topo.hosts + " hosts");
            }
            for (long size : sizes) {
                long[] dropped = new long[1];
                long[] stepNanos = runOne(topo, w, (int) size, steps, dropped);
                long[] sorted = stepNanos.clone();
                Arrays.sort(sorted);
                double p50 = sorted[sorted.length / 2] / 1e6;
                double p99 = sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * 0.99) - 1)] / 1e6;
                double bound = ((double) w * size + size) * 8 / topo.hostLinkBitsPerSecond * 1e3;
                out.printf(Locale.ROOT, "%8d %10s %12.3f %12.3f %12.3f %9.3f %9.3f %9d%n", w, CollectiveCommand.size(size), p50, p99,
                        bound, p50 / bound, p99 / bound, dropped[0]);
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("transport", "homa-sim");
                m.put("pattern", "parameter-server");
                m.put("workers", w);
                m.put("bytes", size);
                m.put("steps", steps);
                m.put("step_p50_ms", p50);
                m.put("step_p99_ms", p99);
                m.put("bound_ms", bound);
                m.put("p99_over_bound", p99 / bound);
                m.put("port_buffer_bytes", portBufferBytes);
                m.put("packets_dropped", dropped[0]);
                results.add(m);
            }
        }
        return results;
    }

    private static long[] runOne(DatacenterTopology topo, int w, int size, int steps, long[] dropped) {
        Datacenter dc = new Datacenter(topo, Datacenter.engineConfigFor(topo), 11);
        DatacenterHost server = dc.host(0);
        byte[] zeros = new byte[size];
        server.onEvent(e -> {
            if (e.kind() == EngineEvent.Kind.REQUEST) {
                e.message().release();
                server.respond(e.peer(), e.rpcId(), ByteBuffer.wrap(zeros)); // the parameters
            }
        });
        int[] pending = new int[1];
        int[] failed = new int[1];
        for (int i = 1; i <= w; i++) {
            dc.host(i).onEvent(e -> {
                if (e.kind() == EngineEvent.Kind.RESPONSE) {
                    e.message().release();
                    pending[0]--;
                } else if (e.kind() == EngineEvent.Kind.FAILED) {
                    failed[0]++;
                    pending[0]--;
                }
            });
        }
        long[] stepNanos = new long[steps];
        for (int s = 0; s < steps; s++) {
            long start = dc.now();
            pending[0] = w;
            for (int i = 1; i <= w; i++) {
                dc.host(i).call(server.address(), ByteBuffer.wrap(zeros)); // the gradients
            }
            long limit = start + 60_000_000_000L;
            while (pending[0] > 0 && dc.now() < limit) {
                dc.runUntil(dc.now() + 10_000);
            }
            if (pending[0] > 0 || failed[0] > 0) {
                throw new IllegalStateException("step " + s + ": " + pending[0] + " pulls missing, " + failed[0] + " failed");
            }
            stepNanos[s] = dc.now() - start;
        }
        dropped[0] = dc.packetsDropped();
        return stepNanos;
    }
}
