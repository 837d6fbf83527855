package io.homa.core.sim;

import io.homa.core.EngineConfig;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Incast: many senders at once to one receiver; its incoming budget bounds what it grants. */
class IncastScenarioTest {
    private static final int SENDERS = 32;

    private static void incast(long seed, int messageLength, EngineConfig cfg) {
        SimNetwork net = new SimNetwork(seed);
        SimHost receiver = net.addHost(cfg);
        List<SimHost> senders = new ArrayList<>();
        for (int i = 0; i < SENDERS; i++) {
            senders.add(net.addHost(cfg));
        }
        RpcLedger ledger = new RpcLedger(net).responseLength(len -> 8);
        net.hosts().forEach(ledger::attach);
        SplittableRandom r = new SplittableRandom(seed);
        for (SimHost s : senders) {
            byte[] request = new byte[messageLength];
            r.nextBytes(request);
            ledger.call(s, receiver, request);
        }
        long maxGranted = 0;
        long limit = net.now() + 60_000_000_000L;
        while (net.step() && net.now() < limit) {
            long granted = receiver.engine().grantedUnreceivedBytes();
            maxGranted = Math.max(maxGranted, granted);
            assertTrue(granted <= cfg.maxIncoming, "granted but unreceived " + granted + " > budget " + cfg.maxIncoming);
        }
        ledger.assertAllExactlyOnce();
        RpcLedger.assertQuiescent(net);
        assertTrue(maxGranted > cfg.maxIncoming / 2, "the budget was actually used: " + maxGranted);
    }

    @Test
    void incast32_defaultBudget_allCompleteWithinBudget() {
        Seeds.run(32L, seed -> incast(seed, 500_000, EngineConfig.builder().linkMbps(10_000).build()));
    }

    @Test
    void incast32_smallBudgetAndOvercommit_allCompleteWithinBudget() {
        Seeds.run(33L, seed -> incast(seed, 200_000, EngineConfig.builder().linkMbps(10_000)
                .maxIncoming(100_000).maxOvercommit(2).build()));
    }

    @Test
    void incast32_fixedWindow_allCompleteWithinBudget() {
        Seeds.run(34L, seed -> incast(seed, 300_000, EngineConfig.builder().linkMbps(10_000)
                .grantWindow(30_000).build()));
    }

    /** Loopback-sized segments (64 KB) with the default budget: the window per message is below a segment. */
    @Test
    void largeMtu_eightSenders_windowBelowSegment_noGrantStall() {
        Seeds.run(35L, seed -> {
            EngineConfig cfg = EngineConfig.builder().mtu(65_535).linkMbps(10_000).build();
            SimNetwork net = new SimNetwork(seed);
            SimHost receiver = net.addHost(cfg);
            RpcLedger ledger = new RpcLedger(net).responseLength(len -> 8);
            ledger.attach(receiver);
            for (int i = 0; i < 8; i++) {
                SimHost s = net.addHost(cfg);
                ledger.attach(s);
                ledger.call(s, receiver, new byte[2_000_000]);
            }
            assertTrue(net.runUntilIdle(10_000_000_000L));
            ledger.assertAllExactlyOnce();
            RpcLedger.assertQuiescent(net);
        });
    }

    /**
     * Twelve clients send a large request each at once against a small engine-wide buffer: the
     * first chunk of each message can fill the memory while every message then needs a second one.
     * Eviction by rank gives the memory to the better-ranked messages (the others' clients restart),
     * so every request completes instead of all waiting for memory that never frees.
     */
    @Test
    void manyLargeRequests_smallBuffer_noMemoryDeadlock() {
        Seeds.run(36L, seed -> {
            EngineConfig cfg = EngineConfig.builder().linkMbps(10_000)
                    .maxBufferedBytes(300_000).maxBufferedBytesPerPeer(300_000).build();
            SimNetwork net = new SimNetwork(seed);
            SimHost server = net.addHost(cfg);
            RpcLedger ledger = new RpcLedger(net).responseLength(len -> 8);
            ledger.attach(server);
            SplittableRandom r = new SplittableRandom(seed);
            for (int i = 0; i < 12; i++) {
                SimHost client = net.addHost(cfg);
                ledger.attach(client);
                byte[] request = new byte[200_000 + i];
                r.nextBytes(request);
                ledger.call(client, server, request);
            }
            assertTrue(net.runUntilIdle(60_000_000_000L), "the network went idle");
            ledger.assertAllExactlyOnce();
            RpcLedger.assertQuiescent(net);
            assertTrue(server.engine().counter(io.homa.core.Counter.MEMORY_EVICTIONS) > 0, "memory was reassigned by rank");
        });
    }
}
