package io.homa.core;

import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.TICK;
import static io.homa.core.EnginePair.bytes;
import static io.homa.core.EnginePair.encode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a client does when a server no longer knows its RPC (docs/protocol.md, "Server restarts"):
 * it sends the request again only if that cannot run it twice (the server never had it whole, or
 * was up since before the whole request left, or the call is idempotent), and else fails the RPC
 * as OUTCOME_UNKNOWN. And what a server says: its uptime, to a client that asks for it.
 */
class ServerIncarnationTest {
    private static final long SECOND = 1_000_000_000L;

    private static final long OLD = 0x1111L;
    private static final long NEW = 0x2222L;

    private static ByteBuffer unknownSince(long serverId, long uptimeNanos) {
        return unknownSince(serverId, OLD, uptimeNanos);
    }

    private static ByteBuffer unknownSince(long serverId, long incarnation, long uptimeNanos) {
        return ByteBuffer.wrap(encode(b -> PacketEncoder.rpcUnknownSince(b, serverId, incarnation, uptimeNanos)));
    }

    private static ByteBuffer plainUnknown(long serverId) {
        return ByteBuffer.wrap(encode(b -> PacketEncoder.bare(b, PacketType.RPC_UNKNOWN, serverId)));
    }

    /** A client RPC on A whose small request went out whole (and was lost) at p.now. */
    private static long wholeRequestSent(EnginePair p, boolean idempotent) {
        long id = p.a.startRequest(p.now, p.addrB, bytes(100), 0, idempotent);
        assertFalse(p.drain(p.a).isEmpty());
        return id;
    }

    @Test
    void serverUpSinceBeforeTheRequest_requestSentAgain() {
        EnginePair p = new EnginePair(CFG);
        long id = wholeRequestSent(p, false);
        p.now += 10 * TICK;
        p.a.onDatagram(p.now, p.addrB, unknownSince(id ^ 1, 10 * TICK + SECOND));
        assertEquals(1, p.a.counter(Counter.REQUEST_RESTARTS));
        List<EnginePair.Packet> again = p.drain(p.a);
        assertEquals(PacketType.DATA, again.get(0).type());
        again.forEach(p::deliver);
        p.collect();
        assertEquals(1, p.eventsB.size(), "the server gets it once");
        assertTrue(p.eventsA.isEmpty());
    }

    @Test
    void serverYoungerThanTheRequest_outcomeUnknown_notSentAgain() {
        EnginePair p = new EnginePair(CFG);
        long id = wholeRequestSent(p, false);
        p.now += 10 * TICK;
        // Up for less than the time since the request left: it may have replaced one that ran it.
        p.a.onDatagram(p.now, p.addrB, unknownSince(id ^ 1, 10 * TICK - 1));
        EngineEvent ev = p.a.pollEvent();
        assertEquals(EngineEvent.Kind.FAILED, ev.kind());
        assertEquals(RpcError.OUTCOME_UNKNOWN, ev.error());
        assertEquals(id, ev.rpcId());
        assertEquals(1, p.a.counter(Counter.OUTCOMES_UNKNOWN));
        assertEquals(0, p.a.counter(Counter.REQUEST_RESTARTS));
        assertTrue(p.drain(p.a).stream().noneMatch(pk -> pk.type() == PacketType.DATA), "nothing sent again");
    }

    @Test
    void serverYoungerThanTheRequest_idempotent_sentAgain() {
        EnginePair p = new EnginePair(CFG);
        long id = wholeRequestSent(p, true);
        p.now += 10 * TICK;
        p.a.onDatagram(p.now, p.addrB, unknownSince(id ^ 1, 0));
        assertEquals(1, p.a.counter(Counter.REQUEST_RESTARTS));
        assertEquals(0, p.a.counter(Counter.OUTCOMES_UNKNOWN));
        assertEquals(PacketType.DATA, p.drain(p.a).get(0).type());
    }

    @Test
    void lateAnswerOfAnIncarnationKnownToBeOld_requestSentAgain() {
        EnginePair p = new EnginePair(CFG);
        long early = wholeRequestSent(p, false);
        p.now += TICK;
        p.a.onDatagram(p.now, p.addrB, unknownSince(early ^ 1, SECOND)); // OLD had started a second ago
        p.drain(p.a);
        p.now += TICK;
        long id = wholeRequestSent(p, false);
        p.now += 100 * TICK;
        // This answer was held up on the way (its uptime alone would make OLD younger than the
        // request), but OLD is known to have started before: nothing earlier can have run it.
        p.a.onDatagram(p.now, p.addrB, unknownSince(id ^ 1, 50 * TICK));
        assertEquals(2, p.a.counter(Counter.REQUEST_RESTARTS));
        assertEquals(0, p.a.counter(Counter.OUTCOMES_UNKNOWN));
    }

    @Test
    void plainRpcUnknownFromAnOlderPeer_wholeRequest_outcomeUnknown() {
        EnginePair p = new EnginePair(CFG);
        long id = wholeRequestSent(p, false);
        p.a.onDatagram(p.now, p.addrB, plainUnknown(id ^ 1)); // says nothing of restarts
        assertEquals(RpcError.OUTCOME_UNKNOWN, p.a.pollEvent().error());
    }

    @Test
    void requestNeverWhole_sentAgainEvenToAYoungServer() {
        EnginePair p = new EnginePair(CFG);
        // Larger than the unscheduled bytes: the rest waits for a grant that never comes.
        long id = p.a.startRequest(p.now, p.addrB, bytes(CFG.unscheduledBytes * 4), 0, false);
        p.drain(p.a);
        p.now += 10 * TICK;
        p.a.onDatagram(p.now, p.addrB, unknownSince(id ^ 1, 0));
        assertEquals(1, p.a.counter(Counter.REQUEST_RESTARTS), "no server can have run a request it never had whole");
        assertEquals(0, p.a.counter(Counter.OUTCOMES_UNKNOWN));
    }

    @Test
    void restartedRequest_judgedByItsFirstWholeCopy() {
        EnginePair p = new EnginePair(CFG);
        long id = wholeRequestSent(p, false);
        long firstSent = p.now;
        p.now += 10 * TICK;
        p.a.onDatagram(p.now, p.addrB, unknownSince(id ^ 1, SECOND)); // safe: sent again
        p.drain(p.a);
        p.now += 10 * TICK;
        // A new incarnation, up since after the first copy left, though before the second: the
        // first may have run.
        p.a.onDatagram(p.now, p.addrB, unknownSince(id ^ 1, NEW, p.now - firstSent - 1));
        assertEquals(RpcError.OUTCOME_UNKNOWN, p.a.pollEvent().error());
    }

    @Test
    void clientResend_asksForUptime_serverAnswersWithItsAge() {
        EnginePair p = new EnginePair(CFG);
        long bStarted = p.now - 5 * SECOND;
        p.b.startReceiving(bStarted);
        p.a.startRequest(p.now, p.addrB, bytes(100), 0, false);
        // The request's DATA is lost every time; everything else flows.
        p.advance(200 * TICK, pk -> pk.type() != PacketType.DATA);
        EnginePair.Packet resend = p.wire.stream().filter(pk -> pk.type() == PacketType.RESEND).findFirst().orElseThrow();
        assertTrue(resend.decoded().wantsUptime, "a client's RESEND asks for the server's uptime");
        EnginePair.Packet answer = p.wire.stream().filter(pk -> pk.type() == PacketType.RPC_UNKNOWN_SINCE)
                .findFirst().orElseThrow();
        assertTrue(answer.decoded().uptimeNanos >= 5 * SECOND && answer.decoded().uptimeNanos <= 5 * SECOND + 200 * TICK,
                "B's age since startReceiving: " + answer.decoded().uptimeNanos);
        assertTrue(p.b.counter(Counter.PACKETS_SENT_RPC_UNKNOWN_SINCE) >= 1);
        assertEquals(0, p.b.counter(Counter.PACKETS_SENT_RPC_UNKNOWN));
        assertTrue(p.a.counter(Counter.REQUEST_RESTARTS) >= 1, "up all along: the request is sent again");
        assertEquals(0, p.a.counter(Counter.OUTCOMES_UNKNOWN));
    }

    @Test
    void resendWithoutTheFlag_plainRpcUnknown_asToAnOlderPeer() {
        EnginePair p = new EnginePair(CFG);
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(encode(b -> PacketEncoder.resend(b, 2, 0, -1, 7))));
        List<EnginePair.Packet> answer = p.drain(p.b);
        assertEquals(PacketType.RPC_UNKNOWN, answer.get(0).type());
        assertEquals(0, p.b.counter(Counter.PACKETS_SENT_RPC_UNKNOWN_SINCE));
    }

    @Test
    void rpcUnknownSinceToAServerRpc_dropped() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        assertEquals(1, p.b.liveServerRpcs());
        p.b.onDatagram(p.now, p.addrA, unknownSince(id, 0));
        assertEquals(1, p.b.liveServerRpcs(), "only a server sends it: a client's is ignored");
        assertEquals(1, p.b.drops(io.homa.core.wire.DropReason.WRONG_STATE));
    }

    @Test
    void startReceiving_afterTheFirstDatagram_refused() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> p.b.startReceiving(p.now));
    }
}
