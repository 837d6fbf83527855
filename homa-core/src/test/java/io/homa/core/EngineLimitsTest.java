package io.homa.core;

import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each resource limit, packet by packet: it is reached, the refusal is typed and counted, nothing
 * is allocated beyond it, and it frees up again when the state it counts goes away. (The same
 * limits under a hostile peer in the simulated network, with honest RPCs alongside:
 * {@code sim.ResourceLimitsTest}.)
 */
class EngineLimitsTest {
    private static final EngineConfig CFG = EngineConfig.builder().pacerEnabled(false).build();
    private static final long TICK = CFG.tickNanos;
    private static final InetSocketAddress SERVER = new InetSocketAddress("127.0.0.1", 9000);
    private static final InetSocketAddress PEER1 = new InetSocketAddress("127.0.0.1", 9001);
    private static final InetSocketAddress PEER2 = new InetSocketAddress("127.0.0.1", 9002);

    private static ByteBuffer bytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 13 + 1);
        }
        return ByteBuffer.wrap(b);
    }

    private static ByteBuffer data(long id, int length, int incoming, int offset, int n) {
        ByteBuffer b = ByteBuffer.allocate(2048);
        PacketEncoder.data(b, id, length, incoming, offset, 1, false, 0, 0, bytes(n), 0, n);
        return b.flip();
    }

    /** Sends the whole unscheduled part of a request of {@code length} from {@code from}. */
    private static void unscheduled(HomaEngine e, InetSocketAddress from, long id, int length, EngineConfig cfg) {
        int seg = cfg.segmentPayload();
        int end = Math.min(length, cfg.unscheduledLimit());
        for (int off = 0; off < end; off += seg) {
            e.onDatagram(0, from, data(id, length, end, off, Math.min(seg, end - off)));
        }
    }

    // ------------------------------------------------------------ maxOutgoingBytes

    @Test
    void startRequest_overMaxOutgoingBytes_refusedTypedAndCounted_roomAgainAfterAbort() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().maxOutgoingBytes(250_000).build(), 1);
        long first = e.startRequest(0, SERVER, bytes(100_000));
        e.startRequest(0, SERVER, bytes(100_000));
        assertEquals(200_000, e.outgoingBytes());
        EngineLimitException x = assertThrows(EngineLimitException.class,
                () -> e.startRequest(0, SERVER, bytes(50_001)));
        assertEquals("maxOutgoingBytes", x.limit());
        assertTrue(x.getMessage().contains("maxOutgoingBytes=250000"), x.getMessage());
        assertTrue(x instanceof IllegalStateException, "callers of old catch it as IllegalStateException");
        assertEquals(1, e.counter(Counter.OUTGOING_LIMIT_REFUSALS));
        assertEquals(2, e.liveClientRpcs(), "the refused call left nothing behind");
        assertEquals(200_000, e.outgoingBytes());
        e.startRequest(0, SERVER, bytes(50_000)); // exactly at the limit is allowed
        assertEquals(250_000, e.outgoingBytesHighWater());
        assertTrue(e.abort(0, first));
        assertEquals(150_000, e.outgoingBytes(), "an aborted request's bytes are released");
        e.startRequest(0, SERVER, bytes(100_000));
        assertEquals(250_000, e.outgoingBytesHighWater());
    }

    @Test
    void startRequest_longerThanMaxOutgoingBytes_illegalArgument_neverQueueable() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().maxOutgoingBytes(1000).build(), 1);
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> e.startRequest(0, SERVER, bytes(1001)));
        assertTrue(x.getMessage().contains("maxOutgoingBytes"), x.getMessage());
        assertEquals(0, e.liveRpcs());
    }

    @Test
    void startRequest_overMaxRpcs_typedAndCounted() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().maxRpcs(2).build(), 1);
        e.startRequest(0, SERVER, bytes(1));
        e.startRequest(0, SERVER, bytes(1));
        EngineLimitException x = assertThrows(EngineLimitException.class, () -> e.startRequest(0, SERVER, bytes(1)));
        assertEquals("maxRpcs", x.limit());
        assertEquals(1, e.counter(Counter.RPC_LIMIT_REFUSALS));
        assertEquals(2, e.outgoingBytes());
    }

    @Test
    void respond_overMaxOutgoingBytes_refused_requestKeepsWaiting_retrySucceedsOnceRoom() {
        EngineConfig cfg = CFG.toBuilder().maxOutgoingBytes(60_000).build();
        EnginePair p = new EnginePair(cfg);
        long id1 = p.a.startRequest(p.now, p.addrB, bytes(10));
        long id2 = p.a.startRequest(p.now, p.addrB, bytes(20));
        p.exchange();
        assertEquals(2, p.eventsB.size());
        ByteBuffer big = bytes(50_000);
        assertTrue(p.b.respond(p.now, p.addrA, id1, big));
        EngineLimitException x = assertThrows(EngineLimitException.class,
                () -> p.b.respond(p.now, p.addrA, id2, bytes(20_000)));
        assertEquals("maxOutgoingBytes", x.limit());
        assertEquals(1, p.b.counter(Counter.OUTGOING_LIMIT_REFUSALS));
        assertEquals(2, p.b.liveServerRpcs(), "the refused RPC still waits for its response");
        p.exchange(); // the first response arrives, and A acknowledges it at its next tick
        p.advance(2 * TICK);
        assertEquals(0, p.b.outgoingBytes(), "the acknowledged response was released");
        ByteBuffer second = bytes(20_000);
        assertTrue(p.b.respond(p.now, p.addrA, id2, second), "room again: the retry is accepted");
        p.exchange();
        assertEquals(2, p.eventsA.size());
        assertArrayEquals(second.array(), p.eventsA.get(1).message().toByteArray());
        assertFalse(p.b.respond(p.now, p.addrA, id2, bytes(1)), "answered already");
        assertEquals(50_000, p.b.outgoingBytesHighWater());
    }

    @Test
    void respond_refusedRpc_canBeAbandoned_clientRestartsAndGetsAnswer() {
        EngineConfig cfg = CFG.toBuilder().maxOutgoingBytes(1_000).build();
        EnginePair p = new EnginePair(cfg);
        List<ByteBuffer> released = new ArrayList<>();
        p.b.setPayloadReleaseListener(released::add);
        long id = p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        assertTrue(p.b.abandon(p.now, p.addrA, id));
        assertFalse(p.b.abandon(p.now, p.addrA, id), "gone");
        assertEquals(1, p.b.counter(Counter.SERVER_RPCS_ABANDONED));
        assertEquals(0, p.b.liveServerRpcs());
        assertTrue(released.isEmpty(), "no response was given, so nothing to release");
        // The client asks (RESEND) after resendTicks, hears RPC_UNKNOWN and sends its request again.
        p.advance((CFG.resendTicks + 1) * TICK);
        assertEquals(1, p.a.counter(Counter.REQUEST_RESTARTS));
        assertEquals(2, p.eventsB.size(), "the request arrived again (at-least-once after a loss of server state)");
        p.serveFromB(new byte[3]);
        p.exchange();
        assertEquals(EngineEvent.Kind.RESPONSE, p.eventsA.get(0).kind());
    }

    @Test
    void abandon_withResponseQueued_releasesIt() {
        EnginePair p = new EnginePair(CFG);
        List<ByteBuffer> released = new ArrayList<>();
        p.b.setPayloadReleaseListener(released::add);
        long id = p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        ByteBuffer resp = bytes(200_000);
        assertTrue(p.b.respond(p.now, p.addrA, id, resp));
        assertEquals(200_000, p.b.outgoingBytes());
        assertTrue(p.b.abandon(p.now, p.addrA, id));
        assertEquals(0, p.b.outgoingBytes());
        assertEquals(List.of(resp), released);
        assertFalse(p.b.abandon(p.now, p.addrB, id), "an unknown peer has no such RPC");
    }

    @Test
    void outgoingBytes_backToZeroWhenEveryRpcEnds() {
        EnginePair p = new EnginePair(CFG);
        for (int i = 0; i < 5; i++) {
            p.a.startRequest(p.now, p.addrB, bytes(30_000 * (i + 1)));
        }
        assertEquals(450_000, p.a.outgoingBytes());
        p.exchange();
        p.serveFromB(new byte[70_000]);
        assertEquals(350_000, p.b.outgoingBytes());
        p.exchange();
        p.advance(5 * TICK);
        assertEquals(0, p.a.outgoingBytes());
        assertEquals(0, p.b.outgoingBytes());
        assertEquals(450_000, p.a.outgoingBytesHighWater());
        assertEquals(350_000, p.b.outgoingBytesHighWater());
    }

    // ------------------------------------------------------------ incoming memory

    @Test
    void perPeerBuffer_onePeerCapped_anotherStillAccepted() {
        EngineConfig cfg = CFG.toBuilder().maxBufferedBytesPerPeer(300_000).build();
        HomaEngine e = new HomaEngine(cfg, 1);
        for (int i = 1; i <= 10; i++) {
            unscheduled(e, PEER1, 2L * i, 10_000_000, cfg); // each takes one 64 KiB chunk and bookkeeping
        }
        assertTrue(e.drops(DropReason.PEER_BUFFER_LIMIT) > 0, "the limit was reached");
        assertTrue(e.bufferedBytes(PEER1) <= 300_000, "peer 1 holds " + e.bufferedBytes(PEER1));
        assertTrue(e.bufferedBytes(PEER1) > 300_000 - 70_000, "peer 1 went up to its limit: " + e.bufferedBytes(PEER1));
        assertEquals(4, e.liveServerRpcs(PEER1), "four 64 KiB messages fit in 300,000 bytes");
        assertEquals(0, e.drops(DropReason.BUFFER_LIMIT));
        unscheduled(e, PEER2, 2, 10_000_000, cfg);
        assertEquals(1, e.liveServerRpcs(PEER2), "another peer is still served");
        assertTrue(e.bufferedBytes(PEER2) > 0);
        assertEquals(e.bufferedBytes(PEER1) + e.bufferedBytes(PEER2), e.bufferedBytes());
        assertTrue(e.peerBufferedBytesHighWater() <= 300_000);
        assertEquals(e.bufferedBytes(), e.bufferedBytesHighWater());
    }

    @Test
    void engineBuffer_cappedOverAllPeers() {
        EngineConfig cfg = CFG.toBuilder().maxBufferedBytes(400_000).maxBufferedBytesPerPeer(250_000).build();
        HomaEngine e = new HomaEngine(cfg, 1);
        for (int port = 0; port < 5; port++) {
            InetSocketAddress peer = new InetSocketAddress("127.0.0.1", 10_000 + port);
            for (int i = 1; i <= 5; i++) {
                unscheduled(e, peer, 2L * i, 5_000_000, cfg);
            }
        }
        assertTrue(e.drops(DropReason.BUFFER_LIMIT) > 0);
        assertTrue(e.bufferedBytesHighWater() <= 400_000, "engine high-water " + e.bufferedBytesHighWater());
        assertTrue(e.bufferedBytesHighWater() > 400_000 - 70_000, "reached " + e.bufferedBytesHighWater());
        assertTrue(e.peerBufferedBytesHighWater() <= 250_000);
    }

    @Test
    void buffers_freedWhenMessagesCompleteOrTimeOut() {
        EngineConfig cfg = CFG.toBuilder().maxBufferedBytesPerPeer(200_000).build();
        HomaEngine e = new HomaEngine(cfg, 1);
        unscheduled(e, PEER1, 2, 5_000_000, cfg);
        unscheduled(e, PEER1, 4, 20_000, cfg); // whole: delivered, so no longer counted
        assertEquals(EngineEvent.Kind.REQUEST, e.pollEvent().kind());
        long one = e.bufferedBytes(PEER1);
        assertTrue(one > 64 * 1024 && one < 64 * 1024 + 1024, "one chunk and bookkeeping: " + one);
        long t = 0;
        for (int i = 0; i <= cfg.timeoutTicks + 1; i++) {
            t += TICK;
            e.onTimer(t);
            while (e.pollTransmit(t, ByteBuffer.allocate(cfg.maxDatagram())) != null) {
                // the RESENDs to a silent peer go nowhere
            }
        }
        assertEquals(0, e.bufferedBytes(PEER1), "the silent peer's message timed out");
        assertEquals(0, e.bufferedBytes());
    }

    @Test
    void claimedHugeLength_costsOneChunkNotATableForTheClaim() {
        EngineConfig cfg = CFG.toBuilder().maxMessageLength(Integer.MAX_VALUE - 65_536).build();
        HomaEngine e = new HomaEngine(cfg, 1);
        for (int i = 1; i <= 100; i++) {
            e.onDatagram(0, PEER1, data(2L * i, Integer.MAX_VALUE - 65_536, 40_000, 0, 1));
        }
        assertEquals(100, e.liveServerRpcs());
        long perMessage = e.bufferedBytes() / 100;
        // A table sized from the claim would cost 32,768 references (256 KiB) per message.
        assertTrue(perMessage < 64 * 1024 + 512, "each 2 GiB claim costs " + perMessage + " bytes");
    }

    @Test
    void claimedLengthBeyondMaxMessageLength_droppedByDecoder_nothingKept() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().maxMessageLength(100_000).build(), 1);
        e.onDatagram(0, PEER1, data(2, 100_001, 1000, 0, 1000));
        assertEquals(1, e.drops(DropReason.MESSAGE_TOO_LONG));
        assertEquals(0, e.liveRpcs());
        assertEquals(0, e.bufferedBytesHighWater());
    }

    // ------------------------------------------------------------ RPC counts

    @Test
    void serverRpcsPerPeer_thousandsOpened_cappedPerPeer_otherPeerServed() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().maxServerRpcsPerPeer(50).build(), 1);
        for (int i = 1; i <= 3000; i++) {
            e.onDatagram(0, PEER1, data(2L * i, 2, 2, 0, 1)); // half of a 2-byte request: stays open
        }
        assertEquals(50, e.liveServerRpcs(PEER1));
        assertEquals(2950, e.drops(DropReason.PEER_RPC_LIMIT));
        e.onDatagram(0, PEER2, data(2, 1, 1, 0, 1));
        assertEquals(EngineEvent.Kind.REQUEST, e.pollEvent().kind(), "another peer's request still delivered");
        assertEquals(1, e.liveServerRpcs(PEER2));
    }

    @Test
    void maxRpcs_totalCapped_clientAndServerTogether() {
        HomaEngine e = new HomaEngine(CFG.toBuilder().maxRpcs(30).maxServerRpcsPerPeer(20).build(), 1);
        e.startRequest(0, SERVER, bytes(10));
        for (int port = 0; port < 3; port++) {
            InetSocketAddress peer = new InetSocketAddress("127.0.0.1", 11_000 + port);
            for (int i = 1; i <= 20; i++) {
                e.onDatagram(0, peer, data(2L * i, 2, 2, 0, 1));
            }
        }
        assertEquals(30, e.liveRpcs());
        assertEquals(29, e.liveServerRpcs());
        assertEquals(31, e.drops(DropReason.RPC_LIMIT));
        assertThrows(EngineLimitException.class, () -> e.startRequest(0, SERVER, bytes(10)));
    }

    @Test
    void needAckFlood_answersBoundedAndStateless() {
        // A peer asking for acks of ids we never had gets one small ACK each, and no state is kept.
        HomaEngine e = new HomaEngine(CFG, 1);
        ByteBuffer out = ByteBuffer.allocate(CFG.maxDatagram());
        for (int i = 1; i <= 1000; i++) {
            ByteBuffer b = ByteBuffer.allocate(20);
            PacketEncoder.bare(b, PacketType.NEED_ACK, 2L * i + 1);
            e.onDatagram(0, PEER1, b.flip());
            assertEquals(PacketEncoder.ackLength(1), e.pollTransmit(0, out.clear()).length());
        }
        assertTrue(e.isQuiescent(), e.describe());
    }
}
