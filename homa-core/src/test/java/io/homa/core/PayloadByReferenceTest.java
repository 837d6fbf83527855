package io.homa.core;

import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link EngineConfig#sendPayloadByReference}: DATA of a large direct payload in large segments is
 * described, not copied (headers only in the transmit buffer); heap, short or small-segment
 * payloads are copied as before.
 */
class PayloadByReferenceTest {
    private static final InetSocketAddress SERVER = new InetSocketAddress("127.0.0.1", 4000);
    private static final EngineConfig CFG = EngineConfig.builder().pacerEnabled(false).mtu(20_028)
            .maxGsoSegments(3).sendPayloadByReference(true).build();

    private static ByteBuffer direct(int n) {
        ByteBuffer b = ByteBuffer.allocateDirect(n);
        for (int i = 0; i < n; i++) {
            b.put((byte) i);
        }
        return b.flip();
    }

    @Test
    void directPayload_onlyHeadersWritten_rangeDescribed() {
        HomaEngine e = new HomaEngine(CFG, 1);
        ByteBuffer payload = direct(50_000);
        e.startRequest(0, SERVER, payload);
        ByteBuffer out = ByteBuffer.allocate(CFG.maxDatagram() * CFG.maxGsoSegments);
        int seg = CFG.segmentPayload();
        Transmit t = e.pollTransmit(0, out);
        assertTrue(t.payloadByReference(), t.toString());
        assertSame(payload, t.payload(), "the buffer the release listener is later told about");
        assertEquals(0, t.payloadOffset());
        int segments = t.segments();
        assertEquals(segments * WireFormat.DATA_HEADER, t.written(), "headers only in the buffer");
        assertEquals(out.position(), t.written());
        assertEquals(WireFormat.DATA_HEADER, t.headerSize());
        int payloadBytes = t.length() - segments * WireFormat.DATA_HEADER;
        assertEquals(Math.min(50_000, Math.min(CFG.unscheduledLimit(), segments * seg)), payloadBytes);
        assertEquals(0, payload.position(), "the caller's buffer is read in place, never moved");
    }

    @Test
    void heapOrShortPayload_copied() {
        HomaEngine e = new HomaEngine(CFG, 1);
        e.startRequest(0, SERVER, ByteBuffer.wrap(new byte[50_000]));
        ByteBuffer out = ByteBuffer.allocate(CFG.maxDatagram() * CFG.maxGsoSegments);
        Transmit t = e.pollTransmit(0, out);
        assertFalse(t.payloadByReference(), "heap bytes need the copy into native memory anyway");
        assertNull(t.payload());
        assertEquals(t.length(), t.written());

        HomaEngine shortOne = new HomaEngine(CFG, 2);
        shortOne.startRequest(0, SERVER, direct(100));
        out.clear();
        assertFalse(shortOne.pollTransmit(0, out).payloadByReference(), "under 1 KiB the copy is cheaper");
    }

    @Test
    void smallSegments_copied() {
        EngineConfig cfg = CFG.toBuilder().mtu(1500).maxGsoSegments(64).build();
        HomaEngine e = new HomaEngine(cfg, 1);
        e.startRequest(0, SERVER, direct(50_000));
        ByteBuffer out = ByteBuffer.allocate(cfg.maxDatagram() * cfg.maxGsoSegments);
        Transmit t = e.pollTransmit(0, out);
        assertFalse(t.payloadByReference(), "at 1,500 B datagrams the slices cost more than the copy");
        assertEquals(t.length(), t.written());
    }
}
