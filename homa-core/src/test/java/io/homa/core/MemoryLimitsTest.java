package io.homa.core;

import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketEncoder;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.bytes;
import static io.homa.core.EnginePair.encode;
import static org.junit.jupiter.api.Assertions.*;

/** Memory limits and eviction ({@link MemoryLimits}). */
class MemoryLimitsTest {
    @Test
    void bufferedBytes_limited() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().maxBufferedBytes(100_000).build(), 1);
        InetSocketAddress c = new InetSocketAddress("127.0.0.1", 9);
        for (int i = 1; i <= 5; i++) {
            long id = 2L * i;
            e.onDatagram(0, c, ByteBuffer.wrap(encode(b -> PacketEncoder.data(b, id, 40_000, 40_000, 0, 0, false, 0, 0, bytes(10), 0, 10))));
        }
        assertTrue(e.bufferedBytes() <= 100_000, "buffered " + e.bufferedBytes());
        assertTrue(e.drops(DropReason.BUFFER_LIMIT) > 0);
    }

    private static final InetSocketAddress PEER = new InetSocketAddress("127.0.0.1", 9);

    /** A server RPC of {@code peer} receiving a {@code length}-byte request, {@code received} bytes in. */
    private static IncomingMessage receiving(Peer peer, long clientId, int length, long seq, int received) {
        Rpc rpc = new Rpc(clientId ^ 1, peer, false);
        peer.serverRpcs.put(clientId, rpc);
        rpc.in = new IncomingMessage(rpc, length, seq);
        rpc.in.write(0, ByteBuffer.allocate(received), 0, received);
        return rpc.in;
    }

    @Test
    void evictable_worstRanked_mostBytesLeftThenNewest_neverItself() {
        MemoryLimits limits = new MemoryLimits(CFG, new EngineCounters());
        Peer p = new Peer(PEER);
        receiving(p, 2, 10_000, 0, 1_000);
        IncomingMessage longOld = receiving(p, 4, 500_000, 1, 1_000);
        IncomingMessage longNew = receiving(p, 6, 500_000, 2, 1_000);
        assertSame(longNew, limits.evictable(List.of(p), 1_000, Long.MAX_VALUE, null));
        assertSame(longOld, limits.evictable(List.of(p), 1_000, Long.MAX_VALUE, longNew), "never for itself");
        assertNull(limits.evictable(List.of(p), 600_000, Long.MAX_VALUE, null), "nothing ranks below the newcomer");
    }

    @Test
    void charge_countsEngineAndPeer_highWatersStay() {
        MemoryLimits limits = new MemoryLimits(CFG, new EngineCounters());
        Peer a = new Peer(PEER);
        Peer b = new Peer(new InetSocketAddress("127.0.0.1", 10));
        limits.charge(a, 300);
        limits.charge(b, 200);
        limits.charge(a, -300);
        assertEquals(200, limits.bufferedBytes());
        assertEquals(0, a.bufferedBytes);
        assertEquals(500, limits.bufferedBytesHighWater());
        assertEquals(300, limits.peerBufferedBytesHighWater());
        assertTrue(limits.overPeerLimit(b, CFG.maxBufferedBytesPerPeer - 199));
        assertFalse(limits.overPeerLimit(b, CFG.maxBufferedBytesPerPeer - 200));
    }
}
