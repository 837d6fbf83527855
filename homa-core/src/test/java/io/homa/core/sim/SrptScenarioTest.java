package io.homa.core.sim;

import io.homa.core.EngineConfig;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SRPT: short messages overtake a long one. A 10 MB message keeps a 10 Gbit/s path busy while
 * 100-byte RPCs start every 50 us on the same path; with SRPT (sender queue, pacer, priorities)
 * they finish within 2x of their idle-link time, and with FIFO scheduling they do not.
 */
class SrptScenarioTest {
    private static final int BIG = 10_000_000;
    private static final long LATENCY = 2_000;

    private static SimNetwork network(long seed, boolean priorities) {
        SimNetwork.Settings s = new SimNetwork.Settings();
        s.linkBitsPerSecond = 10_000_000_000L;
        s.linkLatencyNanos = LATENCY;
        s.priorityQueues = priorities;
        return new SimNetwork(seed, s);
    }

    private static EngineConfig config(boolean fifo) {
        EngineConfig.Builder b = EngineConfig.builder().linkMbps(10_000);
        return (fifo ? b.fifoBaselineForTests() : b).build();
    }

    /** RTT of one 100-byte echo on an idle network. */
    private static long idleRtt(long seed) {
        SimNetwork net = network(seed, true);
        SimHost a = net.addHost(config(false));
        SimHost b = net.addHost(config(false));
        RpcLedger ledger = new RpcLedger(net);
        ledger.attach(a);
        ledger.attach(b);
        // Warm up once so that the cutoffs are known, as they are in the loaded run.
        ledger.call(a, b, new byte[100]);
        net.runUntilIdle(1_000_000_000L);
        RpcLedger.Call c = ledger.call(a, b, new byte[100]);
        net.runUntilIdle(1_000_000_000L);
        ledger.assertAllExactlyOnce();
        return c.rttNanos();
    }

    /** RTTs of 100-byte echoes started every 50 us while a 10 MB request flows on the same path. */
    private static List<Long> loadedRtts(long seed, boolean fifo) {
        SimNetwork net = network(seed, !fifo);
        SimHost a = net.addHost(config(fifo));
        SimHost b = net.addHost(config(fifo));
        RpcLedger ledger = new RpcLedger(net).responseLength(len -> len == BIG ? 0 : len);
        ledger.attach(a);
        ledger.attach(b);
        ledger.call(a, b, new byte[100]);
        net.runUntilIdle(1_000_000_000L);
        RpcLedger.Call big = ledger.call(a, b, new byte[BIG]);
        List<RpcLedger.Call> small = new ArrayList<>();
        net.runFor(200_000); // the long message is well under way
        for (int i = 0; i < 100; i++) {
            small.add(ledger.call(a, b, new byte[100]));
            net.runFor(50_000);
        }
        assertTrue(net.runUntilIdle(10_000_000_000L));
        ledger.assertAllExactlyOnce();
        assertTrue(big.finishedAt > small.get(small.size() - 1).startedAt,
                "the long message was still in flight during the short ones");
        List<Long> rtts = new ArrayList<>();
        small.forEach(c -> rtts.add(c.rttNanos()));
        return rtts;
    }

    @Test
    void shortMessagesUnderLongOne_withSrpt_within2xOfIdle() {
        Seeds.run(7L, seed -> {
            long idle = idleRtt(seed);
            List<Long> rtts = loadedRtts(seed, false);
            long worst = rtts.stream().mapToLong(Long::longValue).max().orElseThrow();
            assertTrue(worst <= 2 * idle, "worst loaded RTT " + worst + " ns vs idle " + idle + " ns");
        });
    }

    @Test
    void shortMessagesUnderLongOne_withFifo_notWithin2xOfIdle() {
        Seeds.run(7L, seed -> {
            long idle = idleRtt(seed);
            List<Long> rtts = loadedRtts(seed, true);
            long worse = rtts.stream().filter(r -> r > 2 * idle).count();
            assertTrue(worse > rtts.size() / 2, worse + " of " + rtts.size()
                    + " short RPCs slower than 2x idle (" + idle + " ns) without SRPT: " + rtts.subList(0, 5));
        });
    }

    @Test
    void idleRtt_isPropagationPlusSerialization() {
        long idle = idleRtt(1);
        // Four link traversals of 2 us each, plus four tiny serializations: a sanity check of the model.
        assertTrue(idle >= 4 * LATENCY && idle < 4 * LATENCY + 2_000, "idle RTT " + idle);
        assertEquals(idle, idleRtt(2), "the idle RTT does not depend on the seed");
    }
}
