package io.homa.core.sim;

import io.homa.core.Counter;
import io.homa.core.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Exactly-once delivery through loss, duplication and reordering of data and control packets. */
class LossRecoveryScenarioTest {
    private static final long SECOND = 1_000_000_000L;

    static SimNetwork faultyNetwork(long seed, double drop, double dup, double reorder) {
        SimNetwork.Settings s = new SimNetwork.Settings();
        FaultModel faults = new FaultModel(drop, dup, reorder, 30_000);
        s.dataFaults = faults;
        s.controlFaults = faults;
        return new SimNetwork(seed, s);
    }

    /** Runs {@code rpcs} W3-sized echo RPCs between random pairs of {@code hosts} hosts. */
    static RpcLedger runWorkload(SimNetwork net, int hosts, int rpcs, Workload w, long spacingNanos) {
        EngineConfig cfg = EngineConfig.builder().linkMbps(10_000).build();
        for (int i = 0; i < hosts; i++) {
            net.addHost(cfg);
        }
        RpcLedger ledger = new RpcLedger(net);
        List<SimHost> all = net.hosts();
        all.forEach(ledger::attach);
        SplittableRandom r = new SplittableRandom(net.seed());
        for (int i = 0; i < rpcs; i++) {
            SimHost client = all.get(r.nextInt(hosts));
            SimHost server = all.get((all.indexOf(client) + 1 + r.nextInt(hosts - 1)) % hosts);
            byte[] request = new byte[w.sample(r)];
            r.nextBytes(request);
            ledger.call(client, server, request);
            net.runFor((long) (-Math.log(1 - r.nextDouble()) * spacingNanos));
        }
        assertTrue(net.runUntilIdle(600 * SECOND), "network never went idle");
        return ledger;
    }

    @Test
    void w3_2000Rpcs_throughLossDuplicationAndReordering_allExactlyOnce() {
        Seeds.run(20260101L, seed -> {
            SimNetwork net = faultyNetwork(seed, 0.05, 0.01, 0.05);
            RpcLedger ledger = runWorkload(net, 4, 2_000, Workload.named("w3"), 5_000);
            ledger.assertAllExactlyOnce();
            RpcLedger.assertQuiescent(net);
            assertTrue(net.packetsDropped() > 0 && net.packetsDuplicated() > 0 && net.packetsReordered() > 0,
                    "faults were injected");
            long retransmitted = net.hosts().stream().mapToLong(h -> h.engine().counter(Counter.PACKETS_RETRANSMITTED)).sum();
            assertTrue(retransmitted > 0, "loss was recovered by retransmission");
        });
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void w1_manySeeds_heavyLoss_allExactlyOnce(long base) {
        Seeds.run(base * 7919, seed -> {
            SimNetwork net = faultyNetwork(seed, 0.20, 0.05, 0.10);
            RpcLedger ledger = runWorkload(net, 3, 300, Workload.named("w1"), 20_000);
            ledger.assertAllExactlyOnce();
            RpcLedger.assertQuiescent(net);
        });
    }

    @Test
    void controlOnlyLoss_grantsAndAcksRecovered() {
        Seeds.run(99L, seed -> {
            SimNetwork.Settings s = new SimNetwork.Settings();
            s.controlFaults = new FaultModel(0.3, 0.0, 0.0, 0);
            SimNetwork net = new SimNetwork(seed, s);
            RpcLedger ledger = runWorkload(net, 2, 50, Workload.named("w4"), 50_000);
            ledger.assertAllExactlyOnce();
            RpcLedger.assertQuiescent(net);
        });
    }

    @Test
    void sameSeed_sameRun() {
        long[] a = trace(1234);
        long[] b = trace(1234);
        org.junit.jupiter.api.Assertions.assertArrayEquals(a, b, "a seed replays exactly");
        long[] c = trace(4321);
        assertTrue(!java.util.Arrays.equals(a, c), "another seed gives another run");
    }

    private static long[] trace(long seed) {
        SimNetwork net = faultyNetwork(seed, 0.05, 0.01, 0.05);
        RpcLedger ledger = runWorkload(net, 3, 200, Workload.named("w3"), 5_000);
        return ledger.calls().stream().mapToLong(c -> c.finishedAt * 31 + c.id).toArray();
    }
}
