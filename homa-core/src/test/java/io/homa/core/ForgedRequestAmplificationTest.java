package io.homa.core;

import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Amplification by a forged request, as it stands: an attacker sends B a one-packet request
 * with the victim A's source address; B's application answers 1 MB. What B sends A is measured:
 * the unscheduled part of the response (no grant from A is needed for it), then nothing: A, which
 * knows no such RPC, stays silent, and B's RPC times out. The bound asserted is today's (unscheduled bytes plus headers and a
 * few control packets); docs/security.md gives the figures. Lowering it (less unscheduled data to
 * a peer never heard from) is an engine change.
 */
class ForgedRequestAmplificationTest {
    private static final int RESPONSE = 1_000_000;

    @Test
    void aForgedRequestMakesTheServerSendTheVictimAtMostTheUnscheduledBytes_thenItStops() {
        EngineConfig cfg = EngineConfig.builder().pacerEnabled(false).build();
        EnginePair p = new EnginePair(cfg); // a: the victim, b: the server
        ByteBuffer forged = ByteBuffer.allocate(2_048);
        byte[] request = new byte[100];
        int requestBytes = PacketEncoder.data(forged, 0x1234_5678_9ABCL << 1, request.length, request.length, 0, 1,
                false, 0, 0, ByteBuffer.wrap(request), 0, request.length);
        p.b.onDatagram(p.now, p.addrA, forged.flip());
        p.collect();
        assertEquals(1, p.eventsB.size(), "the forged request reaches B's application");
        p.serveFromB(new byte[RESPONSE]);
        p.exchange();
        p.advance(10L * cfg.timeoutTicks * cfg.tickNanos);

        long toVictim = p.wire.stream().filter(k -> k.from().equals(p.addrB)).mapToLong(k -> k.bytes().length).sum();
        long dataToVictim = p.sent(p.addrB, PacketType.DATA).stream().mapToLong(k -> k.bytes().length).sum();
        long controlToVictim = toVictim - dataToVictim;
        long fromVictim = p.wire.stream().filter(k -> k.from().equals(p.addrA)).count();
        System.out.printf("[amplification] forged request of %d bytes: server sent the victim %,d bytes"
                        + " (%,d of DATA in %d packets, %,d of control), %.0fx; the victim sent %d packets"
                        + " (%d RPC_UNKNOWN); server RPCs left %d%n", requestBytes, toVictim, dataToVictim,
                p.sent(p.addrB, PacketType.DATA).size(), controlToVictim, (double) toVictim / requestBytes, fromVictim,
                p.sent(p.addrA, PacketType.RPC_UNKNOWN).size(), p.b.liveRpcs());
        assertEquals(0, p.b.liveRpcs(), "the server still holds the forged RPC");
        int segments = (cfg.unscheduledBytes + cfg.segmentPayload() - 1) / cfg.segmentPayload();
        // The unscheduled bytes, rounded up to whole segments, each with its header.
        assertTrue(dataToVictim <= (long) segments * (cfg.segmentPayload() + WireFormat.DATA_HEADER),
                "more than the unscheduled bytes: " + dataToVictim);
        assertTrue(controlToVictim <= 10L * WireFormat.RESEND_LENGTH, "control bytes " + controlToVictim);
    }
}
