package io.homa.core;

import io.homa.core.wire.PacketEncoder;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * State that grows with peers: 100,000 source addresses (as a spoofer would forge them) each
 * complete one RPC with a server engine, 1,000 of them per tick. The peer table, the tombstones
 * and the retained heap stay bounded, the idle-peer sweep above 4,096 peers runs, and once the
 * addresses fall silent the engine holds no RPC, no tombstone and at most the sweep threshold of
 * peers. Deterministic; the heap figure is measured after collections, with a generous bound.
 */
class SpoofedPeersScaleTest {
    private static final int PEERS = 100_000;
    private static final int PER_TICK = 1_000;
    /** The engine sweeps idle peers once it knows more than this many (HomaEngine.PEER_SWEEP_THRESHOLD). */
    private static final int SWEEP_THRESHOLD = 4_096;
    /** Generous: the measured figure is printed; 100,000 peers kept forever would take far more. */
    private static final long MAX_RETAINED_BYTES = 64L << 20;

    @Test
    void hundredThousandSpoofedPeers_eachOneRpc_stateStaysBounded() throws Exception {
        EngineConfig cfg = EngineConfig.builder().pacerEnabled(false).build();
        HomaEngine e = new HomaEngine(cfg, 7);
        ByteBuffer tx = ByteBuffer.allocate(cfg.maxDatagram() * cfg.maxGsoSegments);
        ByteBuffer rx = ByteBuffer.allocate(2_048);
        byte[] payload = new byte[10];
        long heapBefore = retainedHeap();
        long now = 0;
        int peersHighWater = 0;
        int tombstonesHighWater = 0;
        for (int i = 0; i < PEERS; i++) {
            InetSocketAddress peer = spoofed(i);
            long clientId = 2L * (i + 1); // even: a client's id
            rx.clear();
            PacketEncoder.data(rx, clientId, payload.length, payload.length, 0, 1, false, 0, 0,
                    ByteBuffer.wrap(payload), 0, payload.length);
            e.onDatagram(now, peer, rx.flip());
            EngineEvent request = e.pollEvent();
            assertNotNull(request, "request " + i + " not delivered");
            assertEquals(EngineEvent.Kind.REQUEST, request.kind());
            assertTrue(e.respond(now, peer, request.rpcId(), ByteBuffer.wrap(payload)));
            drain(e, now, tx);
            rx.clear();
            PacketEncoder.ack(rx, clientId, new long[]{clientId}, new int[1], 1);
            e.onDatagram(now, peer, rx.flip());
            if ((i + 1) % PER_TICK == 0) {
                now += cfg.tickNanos;
                e.onTimer(now);
                drain(e, now, tx);
                peersHighWater = Math.max(peersHighWater, e.peers());
                tombstonesHighWater = Math.max(tombstonesHighWater, e.tombstones());
            }
        }
        long heapDuring = retainedHeap() - heapBefore;
        for (int t = 0; t < cfg.tombstoneTicks + cfg.timeoutTicks + 2; t++) { // all fall silent
            now += cfg.tickNanos;
            e.onTimer(now);
            drain(e, now, tx);
        }
        long heapAfter = retainedHeap() - heapBefore;
        System.out.printf("[peers] %,d spoofed peers: peer table high-water %,d, tombstones high-water %,d,"
                        + " retained heap %.1f MiB at the end of the flood, %.1f MiB once silent; left: %d peers,"
                        + " %d tombstones, %d RPCs%n", PEERS, peersHighWater, tombstonesHighWater,
                heapDuring / 1048576.0, heapAfter / 1048576.0, e.peers(), e.tombstones(), e.liveRpcs());
        assertEquals(PEERS, e.counter(Counter.SERVER_RPCS_STARTED));
        assertEquals(0, e.liveRpcs());
        assertEquals(0, e.tombstones());
        assertTrue(peersHighWater > SWEEP_THRESHOLD, "the sweep was never needed: " + peersHighWater);
        // Between two sweeps a tick's arrivals join; a peer stays while it has tombstones.
        int bound = SWEEP_THRESHOLD + PER_TICK * (cfg.tombstoneTicks + 2);
        assertTrue(peersHighWater <= bound, "peer table reached " + peersHighWater + ", bound " + bound);
        assertTrue(e.peers() <= SWEEP_THRESHOLD, "idle peers left after the sweep: " + e.peers());
        assertTrue(tombstonesHighWater <= PER_TICK * (cfg.tombstoneTicks + 1), "tombstones " + tombstonesHighWater);
        assertTrue(heapDuring <= MAX_RETAINED_BYTES, "retained " + heapDuring + " bytes");
    }

    /** A distinct address in 10.0.0.0/8 for each index. */
    private static InetSocketAddress spoofed(int i) throws UnknownHostException {
        return new InetSocketAddress(InetAddress.getByAddress(new byte[]{10, (byte) (i >>> 16), (byte) (i >>> 8), (byte) i}),
                4_000 + (i & 0xFF));
    }

    private static void drain(HomaEngine e, long now, ByteBuffer tx) {
        do {
            tx.clear();
        } while (e.pollTransmit(now, tx) != null);
    }

    /** Heap in use after collections (what is retained, not garbage). */
    private static long retainedHeap() {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return rt.totalMemory() - rt.freeMemory();
    }
}
