package io.homa.core;

import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Amplification by a forged request: an attacker sends B a request with the victim A's source
 * address; B's application answers 1 MB. B has never heard from A, so the response sends only
 * whole segments up to the request's length (one at least) before A grants more
 * ({@code OutgoingData#unscheduledFor}); A knows no such RPC and answers the first DATA packet with
 * RPC_UNKNOWN ({@link StrayResponses}), and B frees the RPC at once.
 *
 * <p>The bound asserted, per forged request: DATA to the victim at most max(one segment, the
 * request's payload) plus a DATA header per packet, and at most two control packets (CUTOFFS, if
 * B finds the forged cutoff version stale, and nothing else); the server RPC gone without any
 * time passing. Before this bound a 140-byte forged request made B send the victim 41,216 bytes
 * (294x) and hold the RPC until it timed out. docs/security.md gives the figures.
 */
class ForgedRequestAmplificationTest {
    private static final int RESPONSE = 1_000_000;
    private static final EngineConfig CFG = EngineConfig.builder().pacerEnabled(false).build();
    private static final int SEGMENT = CFG.segmentPayload();

    @ParameterizedTest
    @ValueSource(ints = {100, 1_000, 10_000, 30_000})
    void aForgedRequestMakesTheServerSendTheVictimNoMoreThanTheRequest_andTheVictimStopsIt(int requestLength) {
        EnginePair p = new EnginePair(CFG); // a: the victim, b: the server
        int forgedBytes = forgeRequest(p, requestLength);
        p.serveFromB(new byte[RESPONSE]);
        p.exchange(); // no time passes: B sends, A answers, B stops

        Figures f = figures(p, forgedBytes);
        assertEquals(0, p.b.liveRpcs(), "the server still holds the forged RPC");
        assertEquals(1, p.b.counter(Counter.SERVER_RPCS_ABANDONED), "freed by the victim's RPC_UNKNOWN");
        assertEquals(1, p.sent(p.addrA, PacketType.RPC_UNKNOWN).size(), "the victim answers once");
        assertBound(p, f, requestLength);
    }

    @Test
    void aVictimThatStaysSilent_stillGetsNoMoreThanTheRequest_andTheRpcTimesOut() {
        EnginePair p = new EnginePair(CFG);
        int forgedBytes = forgeRequest(p, 100);
        p.serveFromB(new byte[RESPONSE]);
        // The victim has no Homa socket: everything to it is lost.
        p.exchange(k -> !k.to().equals(p.addrA));
        p.advance(10L * CFG.timeoutTicks * CFG.tickNanos, k -> !k.to().equals(p.addrA));

        Figures f = figures(p, forgedBytes);
        assertEquals(0, p.b.liveRpcs(), "the server still holds the forged RPC");
        assertEquals(1, p.b.counter(Counter.SERVER_RPCS_TIMED_OUT));
        assertBound(p, f, 100);
    }

    @Test
    void anHonestClient_waitsOneRoundTripOnItsFirstLongResponseOnly() {
        EnginePair p = new EnginePair(CFG);
        int unscheduledSegments = CFG.unscheduledLimit() / SEGMENT;
        for (int call = 0; call < 3; call++) {
            p.a.startRequest(p.now, p.addrB, EnginePair.bytes(100));
            p.exchange();
            p.serveFromB(new byte[200_000]);
            // What B sends before hearing anything from A: the first time one segment, later all the
            // unscheduled bytes, as to any peer.
            List<EnginePair.Packet> blind = p.drain(p.b);
            blind.forEach(p::deliver);
            p.exchange();
            long responses = p.eventsA.stream().filter(e -> e.kind() == EngineEvent.Kind.RESPONSE).count();
            assertEquals(call + 1, responses, "call " + call + " completed");
            long blindData = blind.stream().filter(k -> k.type() == PacketType.DATA).count();
            assertEquals(call == 0 ? 1 : unscheduledSegments, blindData, "DATA before A's first GRANT, call " + call);
            p.eventsB.clear();
        }
        assertEquals(0, p.a.counter(Counter.TIMEOUTS));
    }

    /** B receives a forged request of {@code length} bytes from A's address; @return its bytes on the wire. */
    private static int forgeRequest(EnginePair p, int length) {
        byte[] request = new byte[length];
        long id = 0x1234_5678_9ABCL << 1;
        int wire = 0;
        for (int offset = 0; offset < length; offset += SEGMENT) {
            int n = Math.min(SEGMENT, length - offset);
            ByteBuffer forged = ByteBuffer.allocate(2_048);
            wire += PacketEncoder.data(forged, id, length, length, offset, 1, false, 0, 0, ByteBuffer.wrap(request),
                    offset, n);
            p.b.onDatagram(p.now, p.addrA, forged.flip());
        }
        p.collect();
        assertEquals(1, p.eventsB.size(), "the forged request reaches B's application");
        return wire;
    }

    private record Figures(long toVictim, long dataToVictim, int dataPackets, long controlToVictim, int controlPackets) {
    }

    private static Figures figures(EnginePair p, int forgedBytes) {
        List<EnginePair.Packet> toVictim = p.wire.stream().filter(k -> k.from().equals(p.addrB)).toList();
        long bytes = toVictim.stream().mapToLong(k -> k.bytes().length).sum();
        List<EnginePair.Packet> data = toVictim.stream().filter(k -> k.type() == PacketType.DATA).toList();
        long dataBytes = data.stream().mapToLong(k -> k.bytes().length).sum();
        Figures f = new Figures(bytes, dataBytes, data.size(), bytes - dataBytes, toVictim.size() - data.size());
        System.out.printf("[amplification] forged request of %,d bytes: server sent the victim %,d bytes"
                        + " (%,d of DATA in %d packets, %,d of control in %d packets), %.2fx; the victim sent %d"
                        + " RPC_UNKNOWN; server RPCs left %d%n", forgedBytes, f.toVictim, f.dataToVictim,
                f.dataPackets, f.controlToVictim, f.controlPackets, (double) f.toVictim / forgedBytes,
                p.sent(p.addrA, PacketType.RPC_UNKNOWN).size(), p.b.liveRpcs());
        return f;
    }

    private static void assertBound(EnginePair p, Figures f, int requestLength) {
        long payloadBound = Math.max(SEGMENT, (long) requestLength / SEGMENT * SEGMENT);
        int packetBound = (int) (payloadBound / SEGMENT);
        assertTrue(f.dataPackets <= packetBound, "DATA packets " + f.dataPackets + " > " + packetBound);
        assertTrue(f.dataToVictim <= payloadBound + (long) packetBound * WireFormat.DATA_HEADER,
                "DATA bytes " + f.dataToVictim);
        assertTrue(f.controlPackets <= 2 && f.controlToVictim <= 2L * WireFormat.CUTOFFS_LENGTH,
                "control to the victim: " + f.controlPackets + " packets, " + f.controlToVictim + " bytes");
    }
}
