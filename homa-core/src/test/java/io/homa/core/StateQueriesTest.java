package io.homa.core;

import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.bytes;
import static org.junit.jupiter.api.Assertions.*;

/** The answers about the engine's state, through HomaEngine's introspection. */
class StateQueriesTest {
    @Test
    void rpcs__snapshotOfBothSides_oldestFirst() {
        EnginePair p = new EnginePair(CFG);
        long started = p.now;
        long first = p.a.startRequest(p.now, p.addrB, bytes(100));
        p.now += 5;
        long second = p.a.startRequest(p.now, p.addrB, bytes(200));
        p.now += 10;

        List<RpcState> client = snapshot(p.a, p.now);
        assertEquals(List.of(first, second), client.stream().map(RpcState::id).toList(), "oldest first");
        RpcState c = client.get(0);
        assertTrue(c.client());
        assertEquals(p.addrB, c.peer());
        assertEquals("CLIENT_ACTIVE", c.state());
        assertEquals(100, c.outLength());
        assertEquals(0, c.outSent(), "nothing polled yet");
        assertEquals(-1, c.inLength(), "no response yet");
        assertEquals(-1, c.inReceived());
        assertEquals(p.now - started, c.ageNanos());

        p.exchange();
        RpcState sent = snapshot(p.a, p.now).get(0);
        assertEquals(100, sent.outSent());

        List<RpcState> server = snapshot(p.b, p.now);
        assertEquals(2, server.size());
        RpcState s = server.get(0);
        assertFalse(s.client());
        assertEquals(first | 1, s.id(), "the server's id of the RPC is the client's, odd");
        assertEquals("SERVER_PROCESSING", s.state());
        assertEquals(-1, s.inLength(), "the request was delivered: the engine holds it no longer");
        assertEquals(-1, s.outLength(), "no response yet");
        assertEquals(0, s.silentTicks(), "parked while the application works on it");
    }

    @Test
    void rpcs__partlyReceivedRequest_countsReceivedBytesAndGaps() {
        EnginePair p = new EnginePair(CFG);
        int seg = CFG.segmentPayload();
        int length = 3 * seg;
        assertTrue(length <= CFG.unscheduledLimit(), "all three segments go unscheduled");
        p.a.startRequest(p.now, p.addrB, bytes(length));
        p.exchange(pk -> !(pk.type() == PacketType.DATA && pk.decoded().offset == seg));

        RpcState s = snapshot(p.b, p.now).get(0);
        assertEquals("SERVER_RECEIVING", s.state());
        assertEquals(length, s.inLength());
        assertEquals(2L * seg, s.inReceived());
        assertEquals(1, s.gaps(), "the middle segment is missing");
        assertEquals(1, p.b.liveServerRpcs(p.addrA));
        assertTrue(p.b.bufferedBytes(p.addrA) > 0, "its chunks are held for the peer");
        assertFalse(p.b.isQuiescent());
    }

    @Test
    void perPeerGauges__unknownPeer_zero() {
        EnginePair p = new EnginePair(CFG);
        assertEquals(0, p.a.liveServerRpcs(p.addrB));
        assertEquals(0, p.a.bufferedBytes(p.addrB));
        assertEquals(0, p.a.smoothedRttNanos(p.addrB));
        assertTrue(p.a.isQuiescent(), p.a.describe());
    }

    private static List<RpcState> snapshot(HomaEngine e, long now) {
        List<RpcState> out = new ArrayList<>();
        e.rpcs(now, out);
        return out;
    }
}
