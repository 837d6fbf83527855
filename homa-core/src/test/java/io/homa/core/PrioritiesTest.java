package io.homa.core;

import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetSocketAddress;
import java.util.List;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.bytes;
import static org.junit.jupiter.api.Assertions.*;

/** Priority levels and cutoffs ({@link Priorities}). */
class PrioritiesTest {
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
        Priorities priorities = new Priorities(CFG, new EngineCounters(), null, null); // needs neither table nor queue
        Peer peer = new Peer(new InetSocketAddress("127.0.0.1", 1));
        peer.cutoffs = CFG.unscheduledCutoffs();
        peer.cutoffVersion = 1;
        assertEquals(level, priorities.unscheduledPriority(peer, length));
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
}
