package io.homa.collective;

import io.homa.collective.sim.SimCollectives;
import io.homa.core.sim.Datacenter;
import io.homa.core.sim.DatacenterTopology;
import io.homa.core.sim.DatacenterWorkload;
import io.homa.core.sim.Workload;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A collective group and a workload of short RPCs on the same simulated hosts (as coordination
 * RPCs run beside an all-reduce): each driver gets its own RPCs' events and the other's pass by.
 */
class SharedDatacenterTest {
    @Test
    void anAllReduceAndAnRpcWorkload_shareTheHosts_andBothComplete() {
        DatacenterTopology topo = DatacenterTopology.paper().toBuilder().hosts(16).racks(1).build();
        Datacenter dc = new Datacenter(topo, Datacenter.engineConfigFor(topo), 3);
        int[] delivered = new int[1];
        int[] failed = new int[1];
        DatacenterWorkload w = new DatacenterWorkload(dc, Workload.uniform(100, 4_000), 0.1, 5, new DatacenterWorkload.Observer() {
            @Override
            public void offered(int length, long atNanos) {
            }

            @Override
            public void delivered(int length, int src, int dst, long startNanos, long endNanos, long idealNanos) {
                delivered[0]++;
            }

            @Override
            public void failed(int length, long startNanos) {
                failed[0]++;
            }
        });
        w.start(Long.MAX_VALUE);
        int n = 8;
        int[] hosts = new int[n];
        for (int i = 0; i < n; i++) {
            hosts[i] = i * 2;
        }
        List<CollectiveGroup> groups = SimCollectives.on(dc, hosts, CollectiveOptions.defaults().withSegmentBytes(16 << 10), false);
        int[][] data = Reference.ints(17, n, 100_003);
        int[] sum = Reference.intSum(data);
        List<CompletableFuture<Void>> fs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            fs.add(groups.get(r).allReduce(data[r], ReduceOp.SUM));
        }
        long limit = dc.now() + 5_000_000_000L;
        while (!fs.stream().allMatch(CompletableFuture::isDone) && dc.now() < limit) {
            dc.runUntil(dc.now() + 1_000_000);
        }
        fs.forEach(CompletableFuture::join);
        for (int r = 0; r < n; r++) {
            assertArrayEquals(sum, data[r], "rank " + r);
        }
        assertTrue(delivered[0] > 100, "the workload's RPCs were answered beside the all-reduce: " + delivered[0]);
        assertEquals(0, failed[0], "no workload RPC failed");
        assertEquals(0, groups.get(0).stats().refused(), "the group refused none of the workload's requests (they were not its)");
    }
}
