package io.homa.core;

import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Timer traffic that adapts to the path: RESEND and NEED_ACK wait for the measured round trip,
 * asks without progress back off, NEED_ACK does not trigger RESEND, retransmissions are paced.
 */
class AdaptiveTimersTest {
    /** Long timeout (as the netty shell uses) so that the round trip, not the cap, sets the wait. */
    private static final EngineConfig CFG = EngineConfig.builder().pacerEnabled(false).timeoutTicks(1000).build();
    private static final long TICK = CFG.tickNanos;
    private static final long MS = 1_000_000;

    private static ByteBuffer bytes(int n) {
        return ByteBuffer.wrap(new byte[n]);
    }

    /** One request/response whose response leaves B {@code delay} after the request arrived. */
    private static void callWithServerDelay(EnginePair p, long delay) {
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        p.now += delay;
        p.serveFromB(new byte[10]);
        p.eventsB.clear();
        p.exchange();
    }

    @Test
    void roundTrip_measuredFromRequestSentToFirstResponsePacket() {
        EnginePair p = new EnginePair(CFG);
        assertEquals(0, p.a.smoothedRttNanos(p.addrB), "no sample yet");
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        p.now += 30 * MS;
        p.serveFromB(new byte[10]);
        p.exchange();
        assertEquals(30 * MS, p.a.smoothedRttNanos(p.addrB));
        assertEquals(1, p.a.counter(Counter.RTT_SAMPLES));
    }

    @Test
    void retransmittedResponse_isNoSample() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        p.serveFromB(new byte[10]);
        // The response is lost; it arrives only as a retransmission after A's RESEND.
        p.advance(20 * TICK, pk -> !(pk.type() == PacketType.DATA && pk.from().equals(p.addrB) && !pk.decoded().retransmit));
        assertEquals(1, p.eventsA.size(), "the response arrived");
        assertEquals(0, p.a.counter(Counter.RTT_SAMPLES), "Karn: a retransmission measures nothing");
    }

    @Test
    void retransmittedRequest_isNoSample() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(4 * CFG.segmentPayload()));
        int[] data = {0};
        // The request's second segment is lost once; B asks for it, A retransmits it.
        p.advance(20 * TICK, pk -> !(pk.type() == PacketType.DATA && pk.from().equals(p.addrA) && data[0]++ == 1));
        assertTrue(p.a.counter(Counter.PACKETS_RETRANSMITTED) > 0);
        p.serveFromB(new byte[10]);
        p.exchange();
        assertEquals(1, p.eventsA.size(), "the response arrived");
        assertEquals(0, p.a.counter(Counter.RTT_SAMPLES), "Karn: the request was repeated, so its round trip is unknown");
    }

    @Test
    void longRoundTrip_delaysFirstResend() {
        EnginePair p = new EnginePair(CFG);
        for (int i = 0; i < 8; i++) {
            callWithServerDelay(p, 40 * MS);
        }
        long rtt = p.a.smoothedRttNanos(p.addrB);
        assertTrue(rtt >= 30 * MS, "measured " + rtt);
        p.advance(10 * TICK); // acks out
        int before = p.sent(p.addrA, PacketType.RESEND).size();
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        // The server takes as long as before; a fixed 5-tick timer would ask several times.
        p.advance(35 * TICK);
        assertEquals(before, p.sent(p.addrA, PacketType.RESEND).size(), "no RESEND within the measured round trip");
        p.advance(200 * TICK);
        assertTrue(p.sent(p.addrA, PacketType.RESEND).size() > before, "it does ask once the round trip has passed");
    }

    @Test
    void unansweredAsks_backOffExponentially() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        p.serveFromB(new byte[10]);
        List<Long> resendTicks = new ArrayList<>();
        int seen = 0;
        for (int t = 0; t < 400; t++) {
            // Every response packet is lost, originals and retransmissions alike.
            p.advance(TICK, pk -> !(pk.type() == PacketType.DATA && pk.from().equals(p.addrB)));
            int n = p.sent(p.addrA, PacketType.RESEND).size();
            for (; seen < n; seen++) {
                resendTicks.add((long) t);
            }
        }
        assertTrue(resendTicks.size() >= 5, "asked " + resendTicks);
        for (int i = 2; i < resendTicks.size(); i++) {
            long gap = resendTicks.get(i) - resendTicks.get(i - 1);
            long previous = resendTicks.get(i - 1) - resendTicks.get(i - 2);
            assertTrue(gap >= previous, "intervals never shrink without progress: " + resendTicks);
        }
        long first = resendTicks.get(1) - resendTicks.get(0);
        long last = resendTicks.get(resendTicks.size() - 1) - resendTicks.get(resendTicks.size() - 2);
        assertTrue(last >= 8 * first, "intervals grew: " + resendTicks);
        assertTrue(last <= CFG.timeoutTicks / 10 + 1, "but are capped well below the timeout: " + resendTicks);
    }

    /** RESENDs sent by A in {@code ticks} ticks with 20 requests to 20 silent servers, on a link of {@code mbps}. */
    private static long resendsToSilentServers(long mbps, int ticks, long[] deferred) {
        EngineConfig c = EngineConfig.builder().pacerEnabled(false).linkMbps(mbps).timeoutTicks(1000).build();
        EnginePair p = new EnginePair(c);
        for (int i = 0; i < 20; i++) {
            p.a.startRequest(p.now, new java.net.InetSocketAddress("10.9.9." + (i + 1), 4000), bytes(10));
        }
        p.advance(ticks * c.tickNanos); // nobody answers: packets to third parties are lost
        deferred[0] = p.a.counter(Counter.TIMER_PACKETS_DEFERRED);
        return p.sent(p.addrA, PacketType.RESEND).size();
    }

    @Test
    void timerPackets_keepToTheirShareOfTheLink() {
        long[] deferred = new long[1];
        long fast = resendsToSilentServers(25_000, 100, deferred);
        assertEquals(0, deferred[0], "on a fast link the share is never reached");
        // 1 Mbit/s: 5% is 6 bytes per tick, so after a burst of 4 about one 52-byte RESEND in 9 ticks.
        long slow = resendsToSilentServers(1, 100, deferred);
        assertTrue(deferred[0] > 0);
        assertTrue(slow <= 4 + 100 * 6 / 52 + 1, "slow link: " + slow + " RESENDs");
        assertTrue(fast > 3 * slow, "fast " + fast + " vs slow " + slow);
    }

    @Test
    void timerShareSpent_everyRpcStillAsksBeforeItTimesOut() {
        EngineConfig c = EngineConfig.builder().pacerEnabled(false).linkMbps(1).build(); // timeoutTicks 100
        EnginePair p = new EnginePair(c);
        List<java.net.InetSocketAddress> servers = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            servers.add(new java.net.InetSocketAddress("10.9.8." + (i + 1), 4000));
            p.a.startRequest(p.now, servers.get(i), bytes(10));
        }
        p.advance(150 * c.tickNanos); // nobody answers; every RPC times out
        assertEquals(0, p.a.liveClientRpcs());
        assertTrue(p.a.counter(Counter.TIMER_PACKETS_DEFERRED) > 0, "the share was spent");
        for (java.net.InetSocketAddress s : servers) {
            assertTrue(p.wire.stream().anyMatch(pk -> pk.to().equals(s) && pk.type() == PacketType.RESEND),
                    s + " was never asked before its RPC timed out");
        }
    }

    @Test
    void requestWaitingForGrants_fromAServerThatKnowsIt_asksNothing() {
        EnginePair p = new EnginePair(CFG);
        // Far longer than the unscheduled bytes, and every GRANT is lost: the request advances only
        // by B's RESENDs below its grant, and is still incomplete at the end.
        p.a.startRequest(p.now, p.addrB, bytes(40_000_000));
        // Until B first answers about the request, A cannot know B has it, and may probe once.
        p.advance(20 * TICK, pk -> pk.type() != PacketType.GRANT);
        assertEquals(1, p.b.liveServerRpcs());
        assertFalse(p.sent(p.addrB, PacketType.RESEND).isEmpty());
        int before = p.sent(p.addrA, PacketType.RESEND).size();
        p.advance(300 * TICK, pk -> pk.type() != PacketType.GRANT);
        assertEquals(before, p.sent(p.addrA, PacketType.RESEND).size(),
                "the client does not probe a server that knows its request");
        assertFalse(p.sent(p.addrB, PacketType.RESEND).isEmpty(), "the server asks for what it granted");
        assertTrue(p.a.counter(Counter.LOST_GRANTS_RECOVERED) > 0, "and that RESEND stands in for the lost GRANT");
        assertEquals(1, p.a.liveClientRpcs(), "nothing timed out");
        assertTrue(p.eventsB.isEmpty(), "the request was still arriving throughout");
    }

    @Test
    void needAck_forResponseStillArriving_answeredWithNothing() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(10));
        p.exchange();
        ByteBuffer needAck = ByteBuffer.allocate(64);
        PacketEncoder.bare(needAck, PacketType.NEED_ACK, id ^ 1);
        needAck.flip();
        p.a.onDatagram(p.now, p.addrB, needAck);
        assertTrue(p.drain(p.a).isEmpty(), "no RESEND: the response may still be queued in the network");
        assertEquals(1, p.a.liveClientRpcs());
    }

    @Test
    void retransmission_waitsForThePacer() {
        // Retransmissions of at least throttleMinBytes wait for the pacer (smaller ones may pass).
        EngineConfig slow = EngineConfig.builder().linkMbps(10).throttleMinBytes(500).build();
        EnginePair p = new EnginePair(slow);
        // A short request leaves whole (SRPT: first); a long one behind it fills the pacer's queue.
        long shortId = p.a.startRequest(p.now, p.addrB, bytes(1_000));
        p.a.startRequest(p.now, p.addrB, bytes(20_000));
        List<EnginePair.Packet> first = p.drain(p.a);
        int sent = first.stream().mapToInt(pk -> pk.decoded().payloadLength).sum();
        assertTrue(sent < 21_000, "the pacer holds the rest of the long message");
        assertTrue(first.stream().anyMatch(pk -> pk.decoded().senderId == shortId && pk.decoded().offset == 0),
                "the short request was sent whole");
        ByteBuffer resend = ByteBuffer.allocate(64);
        PacketEncoder.resend(resend, shortId ^ 1, 0, 1_000, 6);
        resend.flip();
        long holds = p.a.counter(Counter.PACER_HOLDS);
        p.a.onDatagram(p.now, p.addrB, resend);
        assertTrue(p.drain(p.a).isEmpty(), "the retransmission does not jump the NIC queue");
        assertTrue(p.a.counter(Counter.PACER_HOLDS) > holds);
        boolean retransmitted = false;
        for (int i = 0; i < 10 && !retransmitted; i++) {
            p.now = p.a.nextDeadline();
            p.a.onTimer(p.now);
            retransmitted = p.drain(p.a).stream().anyMatch(pk -> pk.decoded().retransmit && pk.decoded().senderId == shortId);
        }
        assertTrue(retransmitted, "it goes once the queue drains");
    }

    @Test
    void resend_whileWeOweGrantedData_answeredBusyWithoutRetransmitting() {
        EngineConfig slow = EngineConfig.builder().linkMbps(10).build();
        EnginePair p = new EnginePair(slow);
        long id = p.a.startRequest(p.now, p.addrB, bytes(20_000));
        int sent = p.drain(p.a).stream().mapToInt(pk -> pk.decoded().payloadLength).sum();
        assertTrue(sent > 0 && sent < 20_000, "the pacer holds the rest of the message");
        ByteBuffer resend = ByteBuffer.allocate(64);
        PacketEncoder.resend(resend, id ^ 1, 0, sent, 6);
        resend.flip();
        p.a.onDatagram(p.now, p.addrB, resend);
        List<EnginePair.Packet> answer = p.drain(p.a);
        assertEquals(1, answer.size(), "one packet: " + answer);
        assertEquals(PacketType.BUSY, answer.get(0).type(), "the silence is our own backlog, not a loss");
        assertEquals(1, p.a.counter(Counter.RESENDS_ANSWERED_BUSY));
        assertEquals(0, p.a.counter(Counter.PACKETS_RETRANSMITTED));
        // What we owe still goes, none of it marked as sent again.
        List<EnginePair.Packet> rest = new java.util.ArrayList<>();
        for (int i = 0; i < 50; i++) {
            p.now = p.a.nextDeadline();
            p.a.onTimer(p.now);
            rest.addAll(p.drain(p.a));
        }
        assertTrue(rest.stream().anyMatch(pk -> pk.type() == PacketType.DATA), "the held data goes");
        assertTrue(rest.stream().noneMatch(pk -> pk.decoded().retransmit), "nothing is sent twice");
    }
}
