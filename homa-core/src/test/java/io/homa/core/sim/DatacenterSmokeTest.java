package io.homa.core.sim;

import io.homa.core.EngineConfig;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The datacenter simulator in CI: 16 hosts in 2 racks under 2 aggregation switches. Exactly-once
 * delivery through the fabric (also with lossy small buffers), the analytic ideal time checked
 * against idle runs, and a fixed-seed loaded run whose slowdowns must show SRPT at work.
 */
class DatacenterSmokeTest {
    private static final DatacenterTopology SMALL = DatacenterTopology.builder().hosts(16).racks(2).build();

    @Test
    void smallTopologyHasTheExpectedShape() {
        assertEquals(2, SMALL.aggregationSwitches(), "8 hosts x 10 Gbit/s over 40 Gbit/s links");
        assertEquals(4, DatacenterTopology.paper().aggregationSwitches());
        assertEquals(144, DatacenterTopology.paper().hosts);
        assertEquals(1, SMALL.rackOf(8));
    }

    @Test
    void everyRpcDeliveredExactlyOnceWithIntactBytes() {
        Seeds.run(11, seed -> ledgerRun(SMALL, seed));
    }

    @Test
    void exactlyOnceAlsoWithSmallBuffersThatDropAndFlowHashing() {
        DatacenterTopology lossy = SMALL.toBuilder().portBufferBytes(24_000)
                .multipath(DatacenterTopology.Multipath.FLOW_HASH).build();
        Seeds.run(12, seed -> {
            Datacenter dc = ledgerRun(lossy, seed);
            assertTrue(dc.packetsDropped() > 0, "the small buffers should have dropped packets");
        });
    }

    private static Datacenter ledgerRun(DatacenterTopology topo, long seed) {
        Datacenter dc = new Datacenter(topo, Datacenter.engineConfigFor(topo), seed);
        RpcLedger ledger = new RpcLedger(dc::now);
        dc.hosts().forEach(ledger::attach);
        SplittableRandom r = new SplittableRandom(seed);
        Workload w = Workload.named("w3");
        int rpcs = 600;
        int[] servers = new int[rpcs];
        byte[][] requests = new byte[rpcs][];
        for (int i = 0; i < rpcs; i++) {
            int client = r.nextInt(topo.hosts);
            servers[i] = (client + 1 + r.nextInt(topo.hosts - 1)) % topo.hosts;
            requests[i] = new byte[Math.min(w.sample(r), 300_000)];
            r.nextBytes(requests[i]);
            dc.scheduleApp(i * 2_000L + r.nextInt(2_000), client, i); // about 25% load
        }
        dc.onAppTimer((client, i) -> ledger.call(dc.host(client), dc.host(servers[i]), requests[i]));
        long limit = 2_000_000_000L;
        while (!ledger.allFinished() && dc.now() < limit) {
            dc.runUntil(dc.now() + 1_000_000);
        }
        ledger.assertAllExactlyOnce();
        dc.runUntil(dc.now() + 500_000_000L); // acks, tombstones
        for (DatacenterHost h : dc.hosts()) {
            assertTrue(h.engine().isQuiescent(), () -> h.address() + ": " + h.engine().describe());
        }
        return dc;
    }

    @Test
    void onAnIdleNetworkAMessageTakesItsIdealTime() {
        EngineConfig cfg = Datacenter.engineConfigFor(SMALL);
        for (int dst : new int[]{1, 9}) { // same rack, other rack
            for (int size : new int[]{1, 100, 1432, 1433, 5_000, 15_000, 100_000, 1_000_000}) {
                Datacenter dc = new Datacenter(SMALL, cfg, size);
                Slowdowns s = new Slowdowns();
                dc.host(dst).onEvent(e -> s.delivered(size, 0, dst, 0, dc.now(),
                        SMALL.idealNanos(0, dst, size, cfg.segmentPayload())));
                dc.host(0).call(dc.host(dst).address(), new byte[size]);
                dc.runUntil(100_000_000);
                assertEquals(1, s.values.size(), "size " + size);
                double slowdown = s.values.get(0)[1];
                int d = dst;
                // At most the cost of a sprayed 2-frame message whose frames shared a path.
                assertTrue(slowdown >= 1.0 && slowdown < 1.03,
                        () -> "size " + size + " to host " + d + ": slowdown " + slowdown + " on an idle network");
            }
        }
    }

    @Test
    void loadedRunShowsSrptAndFifoIsWorse() {
        double srpt = shortP99(SimAblation.NONE, 21);
        double fifo = shortP99(SimAblation.FIFO, 21);
        assertTrue(srpt >= 1.0 && srpt < 3.0, "short-message p99 slowdown with SRPT at 70% load: " + srpt);
        assertTrue(fifo > 1.5 * srpt, "FIFO " + fifo + " should be clearly worse than SRPT " + srpt);
    }

    private static double shortP99(SimAblation ablation, long seed) {
        DatacenterTopology topo = ablation.topology(SMALL);
        Datacenter dc = new Datacenter(topo, ablation.engine(Datacenter.engineConfigFor(topo)), seed);
        Slowdowns s = new Slowdowns();
        Workload w = Workload.named("w3");
        DatacenterWorkload load = new DatacenterWorkload(dc, w, 0.7, seed, s);
        load.start(10_000_000);
        dc.runUntil(20_000_000);
        assertTrue(s.values.size() > 10_000, "messages delivered: " + s.values.size());
        assertTrue(s.minSlowdown() >= 1.0, "no message may beat the ideal: " + s.minSlowdown());
        return s.p99Below(w.quantile(0.1));
    }

    @Test
    void theSameSeedGivesTheSameRun() {
        long[] first = fingerprint(5);
        long[] again = fingerprint(5);
        assertEquals(first[0], again[0], "events");
        assertEquals(first[1], again[1], "messages and their times");
        assertTrue(first[0] != fingerprint(6)[0], "another seed, another run");
    }

    private static long[] fingerprint(long seed) {
        DatacenterTopology topo = SMALL.toBuilder().hosts(8).build();
        Datacenter dc = new Datacenter(topo, Datacenter.engineConfigFor(topo), seed);
        long[] hash = {0};
        new DatacenterWorkload(dc, Workload.named("w2"), 0.6, seed, new Slowdowns() {
            @Override
            public void delivered(int length, int src, int dst, long startNanos, long endNanos, long idealNanos) {
                hash[0] = hash[0] * 31 + length * 7L + src * 131L + dst * 1031L + endNanos - startNanos;
            }
        }).start(2_000_000);
        dc.runUntil(3_000_000);
        return new long[]{dc.eventsRun(), hash[0]};
    }

    /** Slowdowns of delivered messages, for percentiles by sorting (tests only). */
    static class Slowdowns implements DatacenterWorkload.Observer {
        final List<double[]> values = new ArrayList<>();

        @Override
        public void offered(int length, long atNanos) {
        }

        @Override
        public void delivered(int length, int src, int dst, long startNanos, long endNanos, long idealNanos) {
            values.add(new double[]{length, (double) (endNanos - startNanos) / idealNanos});
        }

        @Override
        public void failed(int length, long startNanos) {
            throw new AssertionError("an RPC failed at " + startNanos);
        }

        double minSlowdown() {
            return values.stream().mapToDouble(v -> v[1]).min().orElse(Double.NaN);
        }

        double p99Below(int maxLength) {
            double[] s = values.stream().filter(v -> v[0] <= maxLength).mapToDouble(v -> v[1]).sorted().toArray();
            assertTrue(s.length > 100, "short messages: " + s.length);
            return s[(int) Math.ceil(0.99 * s.length) - 1];
        }
    }
}
