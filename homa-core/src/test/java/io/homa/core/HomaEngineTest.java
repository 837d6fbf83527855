package io.homa.core;

import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.*;

/** The engine's lifecycle, ids, priorities, grants and control-packet handling, packet by packet. */
class HomaEngineTest {
    /** Defaults, but no pacer: these tests do not move time unless they say so. */
    private static final EngineConfig CFG = EngineConfig.builder().pacerEnabled(false).build();
    private static final long TICK = CFG.tickNanos;

    private static ByteBuffer bytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return ByteBuffer.wrap(b);
    }

    private static byte[] encode(java.util.function.Consumer<ByteBuffer> writer) {
        ByteBuffer b = ByteBuffer.allocate(2048);
        writer.accept(b);
        b.flip();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    // ------------------------------------------------------------ ids

    @Test
    void startRequest__firstIdIsEvenAndNotTwo() {
        HomaEngine e = new HomaEngine(CFG, 5);
        long id = e.startRequest(0, new InetSocketAddress("127.0.0.1", 9), bytes(1));
        assertEquals(0, id & 1);
        assertNotEquals(2, id);
    }

    @Test
    void startRequest__firstIdDependsOnSeed() {
        Set<Long> ids = new HashSet<>();
        for (long seed = 0; seed < 50; seed++) {
            ids.add(new HomaEngine(CFG, seed).startRequest(0, new InetSocketAddress("127.0.0.1", 9), bytes(1)));
        }
        assertEquals(50, ids.size(), "first ids are unpredictable, not a fixed start");
    }

    @Test
    void startRequest__successiveIdsDistinctAndEven() {
        HomaEngine e = new HomaEngine(CFG, 1);
        Set<Long> ids = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            long id = e.startRequest(0, new InetSocketAddress("127.0.0.1", 9), bytes(1));
            assertEquals(0, id & 1);
            assertTrue(ids.add(id));
        }
    }

    @Test
    void startRequest__idCarriesShard() {
        EngineConfig cfg = CFG.toBuilder().idShard(5, 8).build();
        HomaEngine e = new HomaEngine(cfg, 3);
        for (int i = 0; i < 100; i++) {
            long id = e.startRequest(0, new InetSocketAddress("127.0.0.1", 9), bytes(1));
            assertEquals(5, (id >>> 1) & 7, "shard bits");
            assertEquals(0, id & 1);
        }
    }

    @Test
    void responsePackets__carryServerIdXorOne() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(100));
        p.exchange();
        p.serveFromB(new byte[50]);
        p.exchange();
        assertEquals(id, p.sent(p.addrA, PacketType.DATA).get(0).decoded().senderId);
        assertEquals(id ^ 1, p.sent(p.addrB, PacketType.DATA).get(0).decoded().senderId);
        assertEquals(EngineEvent.Kind.RESPONSE, p.eventsA.get(0).kind());
        assertEquals(id, p.eventsA.get(0).rpcId());
        assertEquals(id, p.eventsB.get(0).rpcId(), "the server names the RPC by the client's id");
    }

    // ------------------------------------------------------------ arguments

    @Test
    void startRequest__tooLong_rejectedWithReason() {
        EngineConfig cfg = CFG.toBuilder().maxMessageLength(1000).build();
        HomaEngine e = new HomaEngine(cfg, 1);
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> e.startRequest(0, new InetSocketAddress("127.0.0.1", 9), bytes(1001)));
        assertTrue(x.getMessage().contains("maxMessageLength"), x.getMessage());
        assertEquals(0, e.liveRpcs());
    }

    @Test
    void startRequest__nullArguments_namedInException() {
        HomaEngine e = new HomaEngine(CFG, 1);
        NullPointerException x = assertThrows(NullPointerException.class, () -> e.startRequest(0, null, bytes(1)));
        assertTrue(x.getMessage().contains("server"));
        x = assertThrows(NullPointerException.class,
                () -> e.startRequest(0, new InetSocketAddress("127.0.0.1", 9), null));
        assertTrue(x.getMessage().contains("request"));
    }

    @Test
    void startRequest__overMaxRpcs_refused() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().maxRpcs(3).build(), 1);
        InetSocketAddress s = new InetSocketAddress("127.0.0.1", 9);
        for (int i = 0; i < 3; i++) {
            e.startRequest(0, s, bytes(1));
        }
        IllegalStateException x = assertThrows(IllegalStateException.class, () -> e.startRequest(0, s, bytes(1)));
        assertTrue(x.getMessage().contains("maxRpcs"));
    }

    @Test
    void pollTransmit__bufferTooSmall_rejected() {
        HomaEngine e = new HomaEngine(CFG, 1);
        assertThrows(IllegalArgumentException.class, () -> e.pollTransmit(0, ByteBuffer.allocate(100)));
    }

    @Test
    void respond__unknownRpc_returnsFalse() {
        HomaEngine e = new HomaEngine(CFG, 1);
        assertFalse(e.respond(0, new InetSocketAddress("127.0.0.1", 9), 42, bytes(1)));
    }

    @Test
    void respond__twice_secondReturnsFalse() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        EngineEvent req = p.eventsB.get(0);
        assertTrue(p.b.respond(p.now, req.peer(), req.rpcId(), bytes(5)));
        assertFalse(p.b.respond(p.now, req.peer(), req.rpcId(), bytes(5)));
    }

    @Test
    void abort__unknown_returnsFalse() {
        assertFalse(new HomaEngine(CFG, 1).abort(0, 1234));
    }

    @Test
    void abort__freesStateAndReleasesPayload() {
        HomaEngine e = new HomaEngine(CFG, 1);
        List<ByteBuffer> released = new java.util.ArrayList<>();
        e.setPayloadReleaseListener(released::add);
        ByteBuffer req = bytes(100_000);
        long id = e.startRequest(0, new InetSocketAddress("127.0.0.1", 9), req);
        assertTrue(e.abort(0, id));
        assertEquals(List.of(req), released);
        assertTrue(e.isQuiescent(), e.describe());
        assertNull(e.pollEvent(), "no event for an aborted RPC");
    }

    @Test
    void payloadReleased__afterResponseAndAfterAck() {
        EnginePair p = new EnginePair(CFG);
        List<ByteBuffer> releasedA = new java.util.ArrayList<>();
        List<ByteBuffer> releasedB = new java.util.ArrayList<>();
        p.a.setPayloadReleaseListener(releasedA::add);
        p.b.setPayloadReleaseListener(releasedB::add);
        ByteBuffer req = bytes(10);
        p.a.startRequest(p.now, p.addrB, req);
        p.exchange();
        ByteBuffer resp = bytes(20);
        EngineEvent r = p.eventsB.get(0);
        p.b.respond(p.now, r.peer(), r.rpcId(), resp);
        p.exchange();
        assertEquals(List.of(req), releasedA);
        assertTrue(releasedB.isEmpty(), "the server keeps its response until acknowledged");
        p.advance(5 * TICK);
        assertEquals(List.of(resp), releasedB);
    }

    // ------------------------------------------------------------ lifecycle and state

    @ParameterizedTest
    @CsvSource({"0,0", "0,1", "1,0", "100,0", "1432,1433", "40000,40000", "100000,3", "3,100000", "1000000,1"})
    void echo__sizes_completeAndLeaveNoState(int requestLength, int responseLength) {
        EnginePair p = new EnginePair(CFG);
        ByteBuffer req = bytes(requestLength);
        long id = p.a.startRequest(p.now, p.addrB, req);
        p.exchange();
        assertEquals(1, p.eventsB.size());
        assertArrayEquals(req.array(), p.eventsB.get(0).message().toByteArray());
        ByteBuffer resp = bytes(responseLength);
        p.serveFromB(resp.array());
        p.exchange();
        assertEquals(1, p.eventsA.size());
        assertEquals(id, p.eventsA.get(0).rpcId());
        assertArrayEquals(resp.array(), p.eventsA.get(0).message().toByteArray());
        p.advance((CFG.tombstoneTicks + 5) * TICK);
        assertTrue(p.a.isQuiescent(), p.a.describe());
        assertTrue(p.b.isQuiescent(), p.b.describe());
        assertEquals(Long.MAX_VALUE, p.a.nextDeadline());
        assertEquals(Long.MAX_VALUE, p.b.nextDeadline());
    }

    @Test
    void nextDeadline__oneTickAfterStart_maxWhenIdle() {
        HomaEngine e = new HomaEngine(CFG, 1);
        assertEquals(Long.MAX_VALUE, e.nextDeadline());
        e.startRequest(500, new InetSocketAddress("127.0.0.1", 9), bytes(1));
        assertEquals(500 + TICK, e.nextDeadline());
    }

    @Test
    void onTimer__spuriousCallsAreHarmless() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(3000));
        for (int i = 0; i < 100; i++) {
            p.a.onTimer(p.now);
            p.b.onTimer(p.now);
        }
        p.exchange();
        p.serveFromB(new byte[1]);
        p.exchange();
        assertEquals(1, p.eventsA.size());
        assertEquals(0, p.a.counter(Counter.TICKS), "no tick ran before its time");
    }

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
    void lateDuplicateRequest_afterAck_notDeliveredAgain() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(10));
        List<EnginePair.Packet> request = p.drain(p.a);
        request.forEach(p::deliver);
        p.serveFromB(new byte[10]);
        p.exchange();
        p.advance((CFG.ackDelayTicks + 1) * TICK);
        assertEquals(0, p.b.liveServerRpcs());
        request.forEach(p::deliver); // the network delivers an old copy
        assertEquals(1, p.eventsB.size(), "delivered once");
        assertEquals(1, p.b.counter(Counter.LATE_DUPLICATE_REQUESTS));
        p.advance(CFG.tombstoneTicks * TICK + 2 * TICK);
        assertEquals(0, p.b.tombstones(), "tombstones expire");
        assertTrue(p.b.isQuiescent());
    }

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

    // ------------------------------------------------------------ unscheduled and granted bytes

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
    void needAck__unknownClientRpc_answeredWithAck() {
        HomaEngine e = new HomaEngine(CFG, 1);
        InetSocketAddress peer = new InetSocketAddress("127.0.0.1", 77);
        e.onDatagram(0, peer, ByteBuffer.wrap(encode(b -> PacketEncoder.bare(b, PacketType.NEED_ACK, 4001))));
        ByteBuffer out = ByteBuffer.allocate(CFG.maxDatagram());
        assertNotNull(e.pollTransmit(0, out));
        assertEquals(PacketType.ACK.code, out.get(WireFormat.OFF_TYPE) & 0xFF);
        assertEquals(4000, out.getLong(WireFormat.ACK_OFF_ENTRIES));
    }

    @Test
    void rpcUnknown__clientRestartsRequestFromZero() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(3000));
        p.drain(p.a); // lost
        p.a.onDatagram(p.now, p.addrB, ByteBuffer.wrap(encode(b -> PacketEncoder.bare(b, PacketType.RPC_UNKNOWN, id ^ 1))));
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

    @Test
    void invalidDatagram_countedNeverThrown() {
        HomaEngine e = new HomaEngine(CFG, 1);
        e.onDatagram(0, new InetSocketAddress("127.0.0.1", 9), ByteBuffer.wrap(new byte[]{1, 2, 3}));
        e.onDatagram(0, new InetSocketAddress("127.0.0.1", 9), ByteBuffer.wrap(new byte[40]));
        assertEquals(1, e.drops(DropReason.TOO_SHORT));
        assertEquals(1, e.drops(DropReason.BAD_MAGIC));
        assertEquals(2, e.counter(Counter.PACKETS_DROPPED));
    }

    // ------------------------------------------------------------ priorities and cutoffs

    @Test
    void unscheduledPriority__beforeCutoffsIsDefault_afterIsFromCutoffs() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(100));
        p.exchange();
        assertEquals(CFG.defaultUnscheduledPriority, p.sent(p.addrA, PacketType.DATA).get(0).priority());
        assertEquals(1, p.sent(p.addrB, PacketType.CUTOFFS).size(), "the receiver announced its cutoffs");
        p.a.startRequest(p.now, p.addrB, bytes(100));
        p.exchange();
        assertEquals(7, p.sent(p.addrA, PacketType.DATA).get(1).priority());
    }

    @ParameterizedTest
    @CsvSource({"1,7", "200,7", "201,6", "2800,6", "2801,5", "15000,5", "15001,4", "1000000,4", "5000000,4"})
    void unscheduledPriority__fromLength(int length, int level) {
        HomaEngine e = new HomaEngine(CFG, 1);
        Peer peer = new Peer(new InetSocketAddress("127.0.0.1", 1));
        peer.cutoffs = CFG.unscheduledCutoffs();
        peer.cutoffVersion = 1;
        assertEquals(level, e.unscheduledPriority(peer, length));
    }

    @Test
    void cutoffs__rateLimitedPerPeer() {
        EnginePair p = new EnginePair(CFG);
        for (int i = 0; i < 5; i++) {
            p.a.startRequest(p.now, p.addrB, bytes(10));
        }
        List<EnginePair.Packet> burst = p.drain(p.a);
        burst.forEach(p::deliver);
        p.drain(p.b);
        assertEquals(1, p.sent(p.addrB, PacketType.CUTOFFS).size(), "one CUTOFFS for a burst");
    }

    @Test
    void controlPackets__atHighestPriority() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(500_000));
        p.exchange();
        for (EnginePair.Packet pk : p.wire) {
            if (pk.type() != PacketType.DATA) {
                assertEquals(7, pk.priority(), pk.type() + " priority");
            }
        }
    }

    @Test
    void scheduledData__usesGrantPriority_atMostMaxScheduled() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(500_000));
        p.exchange();
        boolean sawScheduled = false;
        for (EnginePair.Packet pk : p.sent(p.addrA, PacketType.DATA)) {
            if (pk.decoded().offset >= CFG.unscheduledLimit()) {
                sawScheduled = true;
                assertTrue(pk.priority() <= CFG.maxScheduledPriority, "scheduled priority " + pk.priority());
            }
        }
        assertTrue(sawScheduled);
        for (EnginePair.Packet g : p.sent(p.addrB, PacketType.GRANT)) {
            assertTrue(g.decoded().priority <= CFG.maxScheduledPriority);
        }
    }

    // ------------------------------------------------------------ GSO, SRPT, pacer

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
    void pacer__holdsLongMessageButNotShortOne() {
        EngineConfig cfg = CFG.toBuilder().pacerEnabled(true).linkMbps(100).build(); // slow link: the backlog builds fast
        HomaEngine e = new HomaEngine(cfg, 1);
        InetSocketAddress s = new InetSocketAddress("127.0.0.1", 9);
        e.startRequest(0, s, bytes(200_000));
        ByteBuffer out = ByteBuffer.allocate(cfg.maxDatagram() * cfg.maxGsoSegments);
        int sentBefore = 0;
        while (e.pollTransmit(0, out.clear()) != null) {
            sentBefore++;
        }
        assertTrue(e.counter(Counter.PACER_HOLDS) > 0, "the pacer held the long message");
        assertTrue(e.nextDeadline() > 0 && e.nextDeadline() < cfg.tickNanos, "woken by the pacer, not the tick");
        long shortId = e.startRequest(0, s, bytes(100));
        Transmit t = e.pollTransmit(0, out.clear());
        assertNotNull(t, "a short message is never held back");
        assertEquals(shortId, out.getLong(WireFormat.OFF_SENDER_ID));
        assertTrue(sentBefore >= 1);
    }

    // ------------------------------------------------------------ silence and timeouts

    @Test
    void silentServer_clientTimesOutAfterTimeoutTicks() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(100));
        long start = p.now;
        p.advance(200 * TICK, pk -> false); // B hears nothing, A hears nothing
        EngineEvent ev = p.eventsA.get(0);
        assertEquals(RpcError.TIMEOUT, ev.error());
        assertTrue(p.a.isQuiescent());
        assertTrue(p.now - start >= CFG.timeoutTicks * TICK);
    }

    @Test
    void silentClient_resendsBeforeTimeout() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(100));
        p.advance(CFG.resendTicks * TICK + TICK, pk -> pk.type() != PacketType.DATA);
        assertFalse(p.sent(p.addrA, PacketType.RESEND).isEmpty(), "the client asked for its response");
        // Nothing of the response yet: it asks for the first segment only, not for everything.
        assertEquals(0, p.sent(p.addrA, PacketType.RESEND).get(0).decoded().grantOrResendOffset);
        assertEquals(CFG.segmentPayload(), p.sent(p.addrA, PacketType.RESEND).get(0).decoded().resendLength);
    }

    @Test
    void receiverWithGap_resendsGap() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(10_000));
        List<EnginePair.Packet> req = p.drain(p.a);
        for (int i = 0; i < req.size(); i++) {
            if (i != 2) {
                p.deliver(req.get(i));
            }
        }
        p.advance(10 * TICK);
        List<EnginePair.Packet> resends = p.sent(p.addrB, PacketType.RESEND);
        assertFalse(resends.isEmpty());
        assertEquals(req.get(2).decoded().offset, resends.get(0).decoded().grantOrResendOffset);
        assertEquals(1, p.eventsB.size(), "the gap was filled");
    }
}
