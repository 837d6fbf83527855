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

/** Sending messages ({@link OutgoingData}): unscheduled and granted bytes, GSO batches, the sender's order, and the answers to GRANT, RESEND, RPC_UNKNOWN and OVERLOADED. */
class OutgoingDataTest {
    @Test
    void unscheduledBytes_sentAtOnce_restOnlyAsGranted() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(1_000_000));
        List<EnginePair.Packet> first = p.drain(p.a);
        int sent = first.stream().mapToInt(pk -> pk.decoded().payloadLength).sum();
        assertEquals(CFG.unscheduledLimit(), sent, "exactly the unscheduled bytes go blind");
        assertTrue(p.drain(p.a).isEmpty(), "nothing more without a grant");
        first.forEach(p::deliver);
        List<EnginePair.Packet> grants = p.drain(p.b).stream().filter(pk -> pk.type() == PacketType.GRANT).toList();
        assertEquals(PacketType.GRANT, grants.get(0).type());
        int granted = grants.get(grants.size() - 1).decoded().grantOrResendOffset;
        assertTrue(granted > CFG.unscheduledLimit());
        grants.forEach(p::deliver);
        int more = p.drain(p.a).stream().mapToInt(pk -> pk.decoded().payloadLength).sum();
        assertEquals(granted - CFG.unscheduledLimit(), more, "exactly up to the grant");
    }

    @Test
    void grant__fromWrongPeer_dropped() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(500_000));
        p.drain(p.a);
        byte[] grant = encode(b -> PacketEncoder.grant(b, id ^ 1, 400_000, 2));
        p.a.onDatagram(p.now, new InetSocketAddress("127.0.0.1", 6666), ByteBuffer.wrap(grant));
        assertEquals(1, p.a.drops(DropReason.WRONG_PEER));
        assertTrue(p.drain(p.a).isEmpty(), "no data for a stranger's grant");
    }

    @Test
    void lostGrants_recoveredByResend() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(300_000));
        int[] lost = {0};
        p.exchange(pk -> {
            if (pk.type() == PacketType.GRANT) {
                lost[0]++;
                return false; // every grant of the first round is lost
            }
            return true;
        });
        assertTrue(lost[0] > 0);
        assertEquals(0, p.eventsB.size(), "the sender is stuck after its unscheduled bytes");
        p.advance(20 * TICK);
        assertEquals(1, p.eventsB.size(), "the request completed");
        assertTrue(p.a.counter(Counter.LOST_GRANTS_RECOVERED) > 0, "a RESEND beyond the grant raised it");
    }

    @Test
    void resend__beyondGrant_raisesGrantAndSends() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(300_000));
        p.drain(p.a);
        int end = CFG.unscheduledLimit() + 20_000;
        byte[] resend = encode(b -> PacketEncoder.resend(b, id ^ 1, CFG.unscheduledLimit(), 20_000, 2));
        p.a.onDatagram(p.now, p.addrB, ByteBuffer.wrap(resend));
        assertEquals(1, p.a.counter(Counter.LOST_GRANTS_RECOVERED));
        List<EnginePair.Packet> out = p.drain(p.a);
        int data = out.stream().filter(pk -> pk.type() == PacketType.DATA).mapToInt(pk -> pk.decoded().payloadLength).sum();
        assertTrue(data >= end - CFG.unscheduledLimit(), "sent up to the requested end: " + data);
    }

    @Test
    void resend__overSentBytesAndBeyondGrant_retransmitsThemAndSendsTheRest() {
        // A lost GRANT and a lost segment at once: the RESEND names both. Raising the grant is no
        // backlog of ours, so the sent part goes again (not BUSY), then the newly granted bytes.
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(300_000));
        p.drain(p.a);
        int unscheduled = CFG.unscheduledLimit();
        byte[] resend = encode(b -> PacketEncoder.resend(b, id ^ 1, unscheduled - 1432, 1432 + 20_000, 2));
        p.a.onDatagram(p.now, p.addrB, ByteBuffer.wrap(resend));
        List<EnginePair.Packet> out = p.drain(p.a);
        assertEquals(1, p.a.counter(Counter.LOST_GRANTS_RECOVERED));
        assertEquals(0, p.a.counter(Counter.RESENDS_ANSWERED_BUSY));
        assertTrue(out.stream().anyMatch(pk -> pk.type() == PacketType.DATA && pk.decoded().retransmit
                && pk.decoded().offset == unscheduled - 1432), "the sent segment again: " + out);
        assertTrue(out.stream().anyMatch(pk -> pk.type() == PacketType.DATA && !pk.decoded().retransmit
                && pk.decoded().offset >= unscheduled), "and the newly granted bytes");
        assertTrue(out.stream().noneMatch(pk -> pk.type() == PacketType.BUSY));
    }

    @Test
    void resend__ofSentRange_retransmitsWithFlagAtGivenPriority() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(10_000));
        p.drain(p.a);
        byte[] resend = encode(b -> PacketEncoder.resend(b, id ^ 1, 1432, 2000, 3));
        p.a.onDatagram(p.now, p.addrB, ByteBuffer.wrap(resend));
        List<EnginePair.Packet> out = p.drain(p.a);
        assertFalse(out.isEmpty());
        for (EnginePair.Packet pk : out) {
            assertTrue(pk.decoded().retransmit);
            assertEquals(3, pk.priority());
        }
        assertEquals(1432, out.get(0).decoded().offset);
        assertEquals(2000, out.stream().mapToInt(pk -> pk.decoded().payloadLength).sum());
    }

    @Test
    void resend__unknownRpc_answeredWithRpcUnknown() {
        HomaEngine e = new HomaEngine(CFG, 1);
        InetSocketAddress peer = new InetSocketAddress("127.0.0.1", 77);
        e.onDatagram(0, peer, ByteBuffer.wrap(encode(b -> PacketEncoder.resend(b, 1000, 0, -1, 7))));
        ByteBuffer out = ByteBuffer.allocate(CFG.maxDatagram());
        Transmit t = e.pollTransmit(0, out);
        assertNotNull(t);
        assertEquals(peer, t.destination());
        assertEquals(PacketType.RPC_UNKNOWN.code, out.get(WireFormat.OFF_TYPE) & 0xFF);
        assertEquals(1001, out.getLong(WireFormat.OFF_SENDER_ID));
    }

    @Test
    void resend__whileServerProcessing_answeredWithBusy() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(encode(b -> PacketEncoder.resend(b, id, 0, -1, 7))));
        List<EnginePair.Packet> out = p.drain(p.b);
        assertEquals(PacketType.BUSY, out.get(0).type());
    }

    @Test
    void rpcUnknown__clientRestartsRequestFromZero() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(3000));
        p.drain(p.a); // lost
        // The server has been up since long before the request: it cannot have run it.
        p.a.onDatagram(p.now, p.addrB, ByteBuffer.wrap(encode(b -> PacketEncoder.rpcUnknownSince(b, id ^ 1, 7, 60_000_000_000L))));
        List<EnginePair.Packet> again = p.drain(p.a);
        assertEquals(0, again.get(0).decoded().offset);
        assertEquals(1, p.a.counter(Counter.REQUEST_RESTARTS));
        again.forEach(p::deliver);
        assertEquals(1, p.eventsB.size());
    }

    @Test
    void rpcUnknown__tooManyRestarts_fails() {
        EngineConfig cfg = CFG.toBuilder().maxRestarts(2).build();
        HomaEngine e = new HomaEngine(cfg, 1);
        InetSocketAddress s = new InetSocketAddress("127.0.0.1", 9);
        long id = e.startRequest(0, s, bytes(10));
        for (int i = 0; i < 3; i++) {
            e.onDatagram(0, s, ByteBuffer.wrap(encode(b -> PacketEncoder.bare(b, PacketType.RPC_UNKNOWN, id ^ 1))));
        }
        EngineEvent ev = e.pollEvent();
        assertEquals(EngineEvent.Kind.FAILED, ev.kind());
        assertEquals(RpcError.PEER_UNKNOWN_RPC, ev.error());
    }

    @Test
    void rpcUnknown__serverDropsRpc() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        assertEquals(1, p.b.liveServerRpcs());
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(encode(b -> PacketEncoder.bare(b, PacketType.RPC_UNKNOWN, id))));
        assertEquals(0, p.b.liveServerRpcs());
        assertEquals(1, p.b.counter(Counter.SERVER_RPCS_ABANDONED));
    }

    @Test
    void transmit__groupsEqualSegmentsForGso() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().pacerEnabled(false).build(), 1);
        e.startRequest(0, new InetSocketAddress("127.0.0.1", 9), bytes(20_000));
        ByteBuffer out = ByteBuffer.allocate(CFG.maxDatagram() * CFG.maxGsoSegments);
        Transmit t = e.pollTransmit(0, out);
        assertTrue(t.segments() > 1);
        assertEquals(CFG.maxDatagram(), t.segmentSize());
        assertEquals(20_000 + t.segments() * WireFormat.DATA_HEADER, t.length(), "all of it, last segment shorter");
        assertTrue(t.isData());
        assertNull(e.pollTransmit(0, out.clear()));
    }

    @Test
    void transmit__maxGsoSegmentsOne_oneDatagramEach() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().maxGsoSegments(1).pacerEnabled(false).build(), 1);
        e.startRequest(0, new InetSocketAddress("127.0.0.1", 9), bytes(5000));
        ByteBuffer out = ByteBuffer.allocate(CFG.maxDatagram() * 4);
        int n = 0;
        Transmit t;
        while ((t = e.pollTransmit(0, out.clear())) != null) {
            assertEquals(1, t.segments());
            n++;
        }
        assertEquals(4, n);
    }

    @Test
    void senderSrpt__shorterMessageFirst() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().pacerEnabled(false).maxGsoSegments(1).build(), 1);
        InetSocketAddress s = new InetSocketAddress("127.0.0.1", 9);
        long longId = e.startRequest(0, s, bytes(30_000));
        long shortId = e.startRequest(0, s, bytes(3_000));
        ByteBuffer out = ByteBuffer.allocate(CFG.maxDatagram());
        e.pollTransmit(0, out);
        assertEquals(shortId, out.getLong(WireFormat.OFF_SENDER_ID), "the shorter message goes first");
        assertNotEquals(longId, shortId);
    }

    @Test
    void senderFifoTestMode__olderMessageFirst() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().fifoBaselineForTests().maxGsoSegments(1).build(), 1);
        InetSocketAddress s = new InetSocketAddress("127.0.0.1", 9);
        long longId = e.startRequest(0, s, bytes(30_000));
        e.startRequest(0, s, bytes(3_000));
        ByteBuffer out = ByteBuffer.allocate(CFG.maxDatagram());
        e.pollTransmit(0, out);
        assertEquals(longId, out.getLong(WireFormat.OFF_SENDER_ID));
    }

    @Test
    void overloaded_serverRefusesUnrun_clientFailsAtOnce_onlyFromItsServer() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(100));
        p.exchange();
        EngineEvent request = p.eventsB.get(0);
        assertEquals(EngineEvent.Kind.REQUEST, request.kind());
        assertFalse(p.b.rejectOverloaded(p.now, p.addrA, id + 2), "no such request");

        // Forged: from a third address, and with a client-side (even) id.
        byte[] forged = encode(b -> PacketEncoder.bare(b, PacketType.OVERLOADED, id ^ 1));
        p.a.onDatagram(p.now, new InetSocketAddress("127.0.0.1", 6666), ByteBuffer.wrap(forged));
        assertEquals(1, p.a.drops(DropReason.WRONG_PEER));
        byte[] even = encode(b -> PacketEncoder.bare(b, PacketType.OVERLOADED, id));
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(even));
        assertEquals(1, p.b.drops(DropReason.WRONG_STATE), "only a server refuses");
        assertEquals(1, p.a.liveClientRpcs(), "the forgeries changed nothing");

        assertTrue(p.b.rejectOverloaded(p.now, request.peer(), request.rpcId()));
        assertFalse(p.b.rejectOverloaded(p.now, request.peer(), request.rpcId()), "refused once");
        assertEquals(0, p.b.liveServerRpcs(), "the server let go of it");
        List<EnginePair.Packet> refusal = p.drain(p.b);
        assertEquals(1, refusal.size());
        assertEquals(PacketType.OVERLOADED, refusal.get(0).type());
        assertEquals(WireFormat.BARE_LENGTH, refusal.get(0).bytes().length);
        assertEquals(id ^ 1, refusal.get(0).decoded().senderId, "the server's id of the RPC");
        refusal.forEach(p::deliver);
        EngineEvent failed = p.eventsA.get(0);
        assertEquals(EngineEvent.Kind.FAILED, failed.kind());
        assertEquals(id, failed.rpcId());
        assertEquals(RpcError.OVERLOADED, failed.error());
        assertEquals(2, p.a.counter(Counter.PACKETS_RECEIVED_OVERLOADED), "the forged one and the real one");
        assertEquals(1, p.b.counter(Counter.PACKETS_SENT_OVERLOADED));
        refusal.forEach(p::deliver); // a duplicate names no live RPC
        assertEquals(1, p.a.drops(DropReason.UNKNOWN_RPC));
        p.advance(CFG.timeoutTicks * TICK);
        assertTrue(p.a.isQuiescent() && p.b.isQuiescent(), p.a.describe() + " / " + p.b.describe());
    }
}
