package io.homa.core;

import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.TICK;
import static io.homa.core.EnginePair.bytes;
import static org.junit.jupiter.api.Assertions.*;

/** The engine's commands, packet dispatch, transmit order and deadlines, packet by packet. */
class HomaEngineTest {
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
    void invalidDatagram_countedNeverThrown() {
        HomaEngine e = new HomaEngine(CFG, 1);
        e.onDatagram(0, new InetSocketAddress("127.0.0.1", 9), ByteBuffer.wrap(new byte[]{1, 2, 3}));
        e.onDatagram(0, new InetSocketAddress("127.0.0.1", 9), ByteBuffer.wrap(new byte[40]));
        assertEquals(1, e.drops(DropReason.TOO_SHORT));
        assertEquals(1, e.drops(DropReason.BAD_MAGIC));
        assertEquals(2, e.counter(Counter.PACKETS_DROPPED));
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

    @Test
    void pacer__lateWakeUp_countedAndMadeUp() {
        EngineConfig cfg = CFG.toBuilder().pacerEnabled(true).linkMbps(1_000).build(); // 12.3 us a datagram
        HomaEngine e = new HomaEngine(cfg, 1);
        InetSocketAddress s = new InetSocketAddress("127.0.0.1", 9);
        e.startRequest(0, s, bytes(30_000)); // all unscheduled
        ByteBuffer out = ByteBuffer.allocate(cfg.maxDatagram() * cfg.maxGsoSegments);
        int first = 0;
        while (e.pollTransmit(0, out.clear()) != null) {
            first++;
        }
        long wake = e.nextDeadline();
        assertTrue(wake > 0 && wake < cfg.tickNanos, "woken by the pacer");
        assertEquals(0, e.counter(Counter.PACER_WAKEUPS));
        long now = wake + 100_000; // 100 us late: about eight datagrams' worth of link time lost
        e.onTimer(now);
        assertEquals(1, e.counter(Counter.PACER_WAKEUPS));
        assertEquals(100_000, e.counter(Counter.PACER_WAKEUP_LATE_NANOS));
        int segments = 0;
        Transmit t;
        while ((t = e.pollTransmit(now, out.clear())) != null) {
            segments += t.segments();
        }
        assertTrue(segments >= 8, "the late wake-up's link time is made up: " + segments + " datagrams (first " + first + ")");
    }
}
