package io.homa.core;

import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.TICK;
import static io.homa.core.EnginePair.bytes;
import static org.junit.jupiter.api.Assertions.*;

/** The timer ({@link RpcTimer}): silence, RESEND and timeouts, packet by packet. */
class RpcTimerTest {
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
