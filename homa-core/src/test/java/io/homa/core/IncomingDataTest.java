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

/** DATA packets in ({@link IncomingData}): admitted or dropped, reassembled, delivered once. */
class IncomingDataTest {
    @Test
    void duplicateRequestWhileProcessing_notDeliveredAgain() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(5000));
        List<EnginePair.Packet> request = p.drain(p.a);
        request.forEach(p::deliver);
        request.forEach(p::deliver);
        assertEquals(1, p.eventsB.size());
        assertTrue(p.b.counter(Counter.DUPLICATE_DATA) >= request.size());
    }

    @Test
    void reorderedSegments_reassembledCorrectly() {
        EnginePair p = new EnginePair(CFG);
        ByteBuffer req = bytes(30_000);
        p.a.startRequest(p.now, p.addrB, req);
        List<EnginePair.Packet> request = new java.util.ArrayList<>(p.drain(p.a));
        java.util.Collections.reverse(request);
        request.forEach(p::deliver);
        assertArrayEquals(req.array(), p.eventsB.get(0).message().toByteArray());
    }

    @Test
    void dataForUnknownClientRpc_droppedAndCounted() {
        HomaEngine e = new HomaEngine(CFG, 1);
        byte[] data = encode(b -> PacketEncoder.data(b, 12345, 10, 10, 0, 0, false, 0, 0, bytes(10), 0, 10));
        e.onDatagram(0, new InetSocketAddress("127.0.0.1", 9), ByteBuffer.wrap(data));
        assertEquals(1, e.drops(DropReason.UNKNOWN_RPC));
        assertEquals(1, e.counter(Counter.PACKETS_DROPPED));
    }

    @Test
    void dataWithChangedLength_dropped() {
        HomaEngine e = new HomaEngine(CFG, 1);
        InetSocketAddress c = new InetSocketAddress("127.0.0.1", 9);
        e.onDatagram(0, c, ByteBuffer.wrap(encode(b -> PacketEncoder.data(b, 100, 5000, 5000, 0, 0, false, 0, 0, bytes(10), 0, 10))));
        e.onDatagram(0, c, ByteBuffer.wrap(encode(b -> PacketEncoder.data(b, 100, 6000, 5000, 10, 0, false, 0, 0, bytes(10), 0, 10))));
        assertEquals(1, e.drops(DropReason.LENGTH_CHANGED));
    }

    @Test
    void dataBeyondGrant_droppedWithoutCreatingState() {
        HomaEngine e = new HomaEngine(CFG, 1);
        InetSocketAddress c = new InetSocketAddress("127.0.0.1", 9);
        e.onDatagram(0, c, ByteBuffer.wrap(encode(b -> PacketEncoder.data(b, 100, 5_000_000, 5_000_000,
                3_000_000, 0, false, 0, 0, bytes(10), 0, 10))));
        assertEquals(1, e.drops(DropReason.BEYOND_GRANT));
        assertEquals(0, e.liveRpcs());
        assertEquals(0, e.bufferedBytes());
    }

    @Test
    void serverRpcsPerPeer_limited() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().maxServerRpcsPerPeer(3).build(), 1);
        InetSocketAddress c = new InetSocketAddress("127.0.0.1", 9);
        for (int i = 1; i <= 5; i++) {
            long id = 2L * i;
            e.onDatagram(0, c, ByteBuffer.wrap(encode(b -> PacketEncoder.data(b, id, 5000, 5000, 0, 0, false, 0, 0, bytes(10), 0, 10))));
        }
        assertEquals(3, e.liveServerRpcs());
        assertEquals(2, e.drops(DropReason.PEER_RPC_LIMIT));
    }
}
