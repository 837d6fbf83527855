package io.homa.collective;

import io.homa.collective.sim.SimCollectives;
import io.homa.core.EngineConfig;
import io.homa.core.sim.FaultModel;
import io.homa.core.sim.SimHost;
import io.homa.core.sim.SimNetwork;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every collective against a direct computation, for 1 to 8 ranks and lengths that do not divide by
 * the group's size, on the deterministic simulated network with the real engine, with 1% of the
 * packets dropped, duplicated or reordered (seeded: the same run every time). Small segments force
 * many pipelined messages per step.
 */
class SimulatedCollectivesTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int[] LENGTHS = {1, 7, 1_003};

    private static final class Cluster {
        final SimNetwork net;
        final List<CollectiveGroup> groups;

        Cluster(int ranks, long seed, CollectiveOptions options) {
            SimNetwork.Settings s = new SimNetwork.Settings();
            FaultModel faults = new FaultModel(0.01, 0.01, 0.01, 20_000);
            s.dataFaults = faults;
            s.controlFaults = faults;
            net = new SimNetwork(seed, s);
            EngineConfig cfg = EngineConfig.builder().linkMbps(10_000).build();
            List<SimHost> hosts = new ArrayList<>();
            for (int i = 0; i < ranks; i++) {
                hosts.add(net.addHost(cfg));
            }
            groups = SimCollectives.on(net, hosts, options);
        }

        /** Starts the operation on every rank, runs the network until all are done, and checks they succeeded. */
        void run(IntFunction<CompletableFuture<Void>> op) {
            List<CompletableFuture<Void>> fs = new ArrayList<>();
            for (int r = 0; r < groups.size(); r++) {
                fs.add(op.apply(r));
            }
            boolean done = net.runUntil(() -> fs.stream().allMatch(CompletableFuture::isDone), 30 * SECOND);
            assertTrue(done, "every rank finished within 30 s of virtual time");
            for (CompletableFuture<Void> f : fs) {
                f.join(); // throws the rank's failure, if any
            }
        }
    }

    private static CollectiveOptions small(Algorithm a) {
        return CollectiveOptions.defaults().withSegmentBytes(256).withAlgorithm(a);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void allReduce_ring_and_halvingDoubling_matchTheDirectSum(int n) {
        for (Algorithm a : new Algorithm[]{Algorithm.RING, Algorithm.HALVING_DOUBLING}) {
            Cluster c = new Cluster(n, 11 + n, small(a));
            for (int len : LENGTHS) {
                int[][] in = Reference.ints(len * 31L + n, n, len);
                int[] want = Reference.intSum(in);
                int[][] data = Arrays.stream(in).map(int[]::clone).toArray(int[][]::new);
                c.run(r -> c.groups.get(r).allReduce(data[r], ReduceOp.SUM));
                for (int r = 0; r < n; r++) {
                    assertArrayEquals(want, data[r], a + ", " + n + " ranks, " + len + " ints, rank " + r);
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 3, 4, 8})
    void allReduce_maxOfFloats_andMinOfLongs(int n) {
        Cluster c = new Cluster(n, 5 + n, small(Algorithm.AUTO));
        float[][] f = Reference.floats(n, n, 1_003);
        float[] fmax = Reference.max(f);
        c.run(r -> c.groups.get(r).allReduce(f[r], ReduceOp.MAX));
        long[][] l = Reference.longs(n + 100, n, 777);
        long[] lmin = Reference.min(l);
        c.run(r -> c.groups.get(r).allReduce(l[r], ReduceOp.MIN));
        for (int r = 0; r < n; r++) {
            assertArrayEquals(fmax, f[r], 0f, "rank " + r);
            assertArrayEquals(lmin, l[r], "rank " + r);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 5, 8})
    void reduceScatter_leavesEachRankItsBlockOfTheSum(int n) {
        Cluster c = new Cluster(n, 21 + n, small(Algorithm.AUTO));
        for (int len : LENGTHS) {
            int[][] in = Reference.ints(len + 7L * n, n, len);
            int[] want = Reference.intSum(in);
            int[][] out = new int[n][];
            for (int r = 0; r < n; r++) {
                out[r] = new int[Reference.blockLength(len, n, r)];
            }
            c.run(r -> c.groups.get(r).reduceScatter(CollectiveBuffer.of(in[r]), CollectiveBuffer.of(out[r]), ReduceOp.SUM));
            for (int r = 0; r < n; r++) {
                int from = Reference.blockOffset(len, n, r);
                assertArrayEquals(Arrays.copyOfRange(want, from, from + out[r].length), out[r], n + " ranks, " + len + ", rank " + r);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 6, 8})
    void allGather_givesEveryRankEveryBlock(int n) {
        Cluster c = new Cluster(n, 31 + n, small(Algorithm.AUTO));
        for (int len : LENGTHS) {
            double[] whole = new double[len];
            for (int i = 0; i < len; i++) {
                whole[i] = i * 1.5 - 100;
            }
            double[][] out = new double[n][len];
            c.run(r -> {
                int from = Reference.blockOffset(len, n, r);
                double[] mine = Arrays.copyOfRange(whole, from, from + Reference.blockLength(len, n, r));
                return c.groups.get(r).allGather(CollectiveBuffer.of(mine), CollectiveBuffer.of(out[r]));
            });
            for (int r = 0; r < n; r++) {
                assertArrayEquals(whole, out[r], 0.0, n + " ranks, " + len + ", rank " + r);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 7, 8})
    void broadcast_fromEveryRoot_treeAndChain(int n) {
        Cluster c = new Cluster(n, 41 + n, small(Algorithm.AUTO));
        for (int len : new int[]{1, 1_003, 3_001}) { // 3,001 ints are 47 segments: the chain
            for (int root = 0; root < n; root++) {
                int[] source = Reference.ints(root * 7L + len, 1, len)[0];
                int[][] data = new int[n][len];
                data[root] = source.clone();
                int rt = root;
                c.run(r -> c.groups.get(r).broadcast(CollectiveBuffer.of(data[r]), rt));
                for (int r = 0; r < n; r++) {
                    assertArrayEquals(source, data[r], n + " ranks, root " + root + ", " + len + ", rank " + r);
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 5, 8})
    void barrier_completesOnlyOnceEveryRankCalledIt(int n) {
        Cluster c = new Cluster(n, 51 + n, small(Algorithm.AUTO));
        c.run(r -> c.groups.get(r).barrier());
        if (n == 1) {
            return;
        }
        // All but the last rank enter: none may pass.
        List<CompletableFuture<Void>> early = new ArrayList<>();
        for (int r = 0; r < n - 1; r++) {
            early.add(c.groups.get(r).barrier());
        }
        c.net.runFor(SECOND);
        for (CompletableFuture<Void> f : early) {
            assertTrue(!f.isDone(), "a rank passed the barrier before the last rank entered");
        }
        CompletableFuture<Void> last = c.groups.get(n - 1).barrier();
        assertTrue(c.net.runUntil(() -> last.isDone() && early.stream().allMatch(CompletableFuture::isDone), 10 * SECOND));
        early.forEach(CompletableFuture::join);
        assertEquals(2, c.groups.get(0).stats().operations(), "rank 0 ran two barriers");
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void overlappedOperations_eachGetTheirOwnResult(int n) {
        Cluster c = new Cluster(n, 61 + n, small(Algorithm.AUTO));
        int[][] a = Reference.ints(1, n, 500);
        int[][] b = Reference.ints(2, n, 333);
        int[] wa = Reference.intSum(a);
        int[] wb = Reference.intSum(b);
        c.run(r -> CompletableFuture.allOf(c.groups.get(r).allReduce(a[r], ReduceOp.SUM),
                c.groups.get(r).allReduce(b[r], ReduceOp.SUM)));
        for (int r = 0; r < n; r++) {
            assertArrayEquals(wa, a[r]);
            assertArrayEquals(wb, b[r]);
        }
    }
}
