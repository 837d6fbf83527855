package io.homa.core;

import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.TICK;
import static io.homa.core.EnginePair.bytes;
import static io.homa.core.EnginePair.encode;
import static org.junit.jupiter.api.Assertions.*;

/** Acknowledgements ({@link Acks}): piggy-backed, batched, delayed, and asked for with NEED_ACK. */
class AcksTest {
    @Test
    void ack__piggyBackedOnNextRequest_freesServerRpc() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        p.serveFromB(new byte[10]);
        p.exchange();
        assertEquals(1, p.b.liveServerRpcs(), "waiting for an ack");
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        assertNotEquals(0, p.sent(p.addrA, PacketType.DATA).get(1).decoded().ackId);
        assertEquals(1, p.b.liveServerRpcs(), "only the new RPC is live");
        assertEquals(1, p.b.counter(Counter.SERVER_RPCS_COMPLETED));
    }

    @Test
    void ack__withoutLaterTraffic_sentAfterAckDelay() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        p.serveFromB(new byte[10]);
        p.exchange();
        p.advance(TICK);
        assertEquals(0, p.sent(p.addrA, PacketType.ACK).size(), "held for a DATA packet to carry it");
        p.advance(CFG.ackDelayTicks * TICK);
        assertEquals(1, p.sent(p.addrA, PacketType.ACK).size());
        assertEquals(0, p.b.liveServerRpcs());
        assertEquals(0, p.sent(p.addrB, PacketType.NEED_ACK).size(), "the ack came before the server asked");
    }

    @Test
    void ack__piggyBacked_noAckPacketLater() {
        EnginePair p = new EnginePair(CFG);
        long first = p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        p.serveFromB(new byte[10]);
        p.exchange();
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        assertEquals(first, p.sent(p.addrA, PacketType.DATA).get(1).decoded().ackId);
        assertEquals(1, p.a.counter(Counter.ACKS_PIGGYBACKED));
        p.serveFromB(new byte[10]);
        p.exchange();
        p.advance(10 * TICK);
        // The second RPC's ack had no DATA to ride on: one ACK packet, for it alone.
        List<EnginePair.Packet> acks = p.sent(p.addrA, PacketType.ACK);
        assertEquals(1, acks.size());
        assertEquals(1, acks.get(0).decoded().ackCount);
        assertTrue(p.b.isQuiescent() || p.b.tombstones() > 0);
        assertEquals(0, p.b.liveServerRpcs());
    }

    @Test
    void ack__onARefusedRequest_stillFreesTheServer() {
        EngineConfig oneRpc = CFG.toBuilder().maxRpcs(1).build();
        EnginePair p = new EnginePair(CFG, oneRpc);
        long first = p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        p.serveFromB(new byte[10]);
        p.exchange();
        assertEquals(1, p.b.liveServerRpcs(), "waiting for its ack: B is full");
        p.a.startRequest(p.now, p.addrB, bytes(10));
        List<EnginePair.Packet> next = p.drain(p.a);
        assertEquals(first, next.get(0).decoded().ackId);
        next.forEach(p::deliver);
        // The ack is taken before the maxRpcs check, so it makes the room the request needs.
        assertEquals(0, p.b.drops(DropReason.RPC_LIMIT));
        assertEquals(2, p.eventsB.stream().filter(e -> e.kind() == EngineEvent.Kind.REQUEST).count());
    }

    @Test
    void ack__fullBatch_sentAtOnce() {
        EnginePair p = new EnginePair(CFG);
        for (int i = 0; i < WireFormat.MAX_ACKS; i++) {
            p.a.startRequest(p.now, p.addrB, bytes(10));
        }
        p.exchange();
        p.serveFromB(new byte[10]);
        p.exchange();
        List<EnginePair.Packet> acks = p.sent(p.addrA, PacketType.ACK);
        assertEquals(1, acks.size(), "one ACK packet, without waiting for a tick");
        assertEquals(WireFormat.MAX_ACKS, acks.get(0).decoded().ackCount);
        assertEquals(0, p.b.liveServerRpcs());
    }

    @Test
    void needAck__lostAcks_serverAsksAndClientAcksUnknownRpc() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        p.serveFromB(new byte[10]);
        p.exchange();
        // Lose every ACK the client volunteers; the server must ask.
        int[] acks = {0};
        p.advance(20 * TICK, pk -> !(pk.type() == PacketType.ACK && acks[0]++ == 0));
        assertFalse(p.sent(p.addrB, PacketType.NEED_ACK).isEmpty(), "the server asked for an ack");
        assertEquals(0, p.b.liveServerRpcs());
        assertTrue(p.b.isQuiescent() || p.b.tombstones() > 0);
    }

    @Test
    void needAck__unknownClientRpc_answeredWithAck() {
        HomaEngine e = new HomaEngine(CFG, 1);
        InetSocketAddress peer = new InetSocketAddress("127.0.0.1", 77);
        e.onDatagram(0, peer, ByteBuffer.wrap(encode(b -> PacketEncoder.bare(b, PacketType.NEED_ACK, 4001))));
        ByteBuffer out = ByteBuffer.allocate(CFG.maxDatagram());
        assertNotNull(e.pollTransmit(0, out));
        assertEquals(PacketType.ACK.code, out.get(WireFormat.OFF_TYPE) & 0xFF);
        assertEquals(4000, out.getLong(WireFormat.ACK_OFF_ENTRIES));
    }
}
