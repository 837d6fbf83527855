package io.homa.core.sim;

import io.homa.core.Counter;
import io.homa.core.EngineConfig;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Grant batching on the simulated network: one 10 MB request over an idle 10 Gbit/s path. With
 * the default batch (8 segments) the receiver sends at most one GRANT for four DATA packets, where
 * a GRANT per segment (batching off) sends about one per DATA packet, and the message still
 * completes at the link rate: within 1% of the unbatched run on the same seed, and within 5% of
 * the time the link needs for its packets (the pacer counts Ethernet framing, which the
 * simulator does not: 2.5% of it).
 */
class GrantBatchingScenarioTest {
    private static final int BIG = 10_000_000;
    private static final long LINK_BITS = 10_000_000_000L;

    record Run(long grants, long data, long rttNanos) {
    }

    private static Run run(long seed, int batchSegments) {
        SimNetwork.Settings s = new SimNetwork.Settings();
        s.linkBitsPerSecond = LINK_BITS;
        s.linkLatencyNanos = 2_000;
        SimNetwork net = new SimNetwork(seed, s);
        EngineConfig cfg = EngineConfig.builder().linkMbps(LINK_BITS / 1_000_000).grantBatchSegments(batchSegments).build();
        SimHost client = net.addHost(cfg);
        SimHost server = net.addHost(cfg);
        RpcLedger ledger = new RpcLedger(net).responseLength(len -> 0);
        ledger.attach(client);
        ledger.attach(server);
        RpcLedger.Call call = ledger.call(client, server, new byte[BIG]);
        assertTrue(net.runUntilIdle(10_000_000_000L));
        ledger.assertAllExactlyOnce();
        return new Run(server.engine().counter(Counter.PACKETS_SENT_GRANT),
                client.engine().counter(Counter.PACKETS_SENT_DATA), call.rttNanos());
    }

    /** The time the link needs for the request's packets (IP and UDP headers included). */
    private static long wireNanos(EngineConfig cfg) {
        long packets = (BIG + cfg.segmentPayload() - 1) / cfg.segmentPayload();
        long wireBytes = BIG + packets * (WireFormat.DATA_HEADER + cfg.ipUdpOverhead);
        return wireBytes * 8 * 1_000_000_000L / LINK_BITS;
    }

    @Test
    void largeMessage_defaultBatch_atMostOneGrantPerFourDataPackets_atLinkRate() {
        Seeds.run(11L, seed -> {
            Run batched = run(seed, EngineConfig.defaults().grantBatchSegments);
            Run perSegment = run(seed, 1);
            String figures = "batched " + batched + ", per segment " + perSegment;
            assertEquals(batched.data(), perSegment.data(), figures);
            assertTrue(perSegment.grants() * 2 > perSegment.data(), "without batching about a GRANT per DATA: " + figures);
            assertTrue(batched.grants() * 4 <= batched.data(), "GRANT/DATA above 1/4: " + figures);
            assertTrue(batched.rttNanos() * 100 <= perSegment.rttNanos() * 101, "batching slowed the message: " + figures);
            long ideal = wireNanos(EngineConfig.defaults());
            assertTrue(batched.rttNanos() * 100 <= ideal * 105, "below the link rate: " + figures + ", link needs " + ideal + " ns");
        });
    }
}
